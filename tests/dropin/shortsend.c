/* tests/dropin/shortsend.c: an MPI_Allgather where rank 0 sends one int and
 * every rank receives 10 per rank — an erroneous program (the type
 * signatures differ) that native Open MPI completes. Under the drop-in the
 * other ranks decide on the receive side and run a plan; rank 0 must run it
 * too (going native alone would hang the job). Blocking, non-blocking and
 * persistent; every block but rank 0's is checked in full, and rank 0's
 * first int, which it did send, on every rank. The same for the block
 * movers: an MPI_Alltoall where rank 0 sends 1 int of each block the others
 * receive 10 of (the first int of each of its blocks must arrive), and an
 * MPI_Scatter whose root receives 20 ints of its own 10 (its first 10 must
 * be its block, the rest as they were). (Native Open MPI 4.1 fails that
 * alltoall on rank 0 with MPI_ERR_TRUNCATE and the other ranks wait for it:
 * the test runs under the drop-in only.) Rank 0 prints "shortsend: ok". */
#include "selfcheck.h"

#include <stdlib.h>

enum { Block = 10 };

int main(int argc, char **argv) {
  begin(&argc, &argv);
  int mine[Block];
  for (int i = 0; i < Block; ++i)
    mine[i] = 1000 * (rank + 1) + i;
  int *all = malloc(sizeof(int) * Block * (size_t)size);
  for (int form = 0; form < Forms; ++form) {
    for (int i = 0; i < Block * size; ++i)
      all[i] = -1;
    const int sendcount = rank == 0 ? 1 : Block;
    MPI_Request req = MPI_REQUEST_NULL;
    int rc;
    if (form == Blocking)
      rc = MPI_Allgather(mine, sendcount, MPI_INT, all, Block, MPI_INT, MPI_COMM_WORLD);
    else if (form == NonBlocking)
      rc = MPI_Iallgather(mine, sendcount, MPI_INT, all, Block, MPI_INT, MPI_COMM_WORLD, &req);
    else
      rc = ALLGATHER_INIT(mine, sendcount, MPI_INT, all, Block, MPI_INT, MPI_COMM_WORLD,
                          MPI_INFO_NULL, &req);
    complete(&req, form, NULL);
    int ok = rc == MPI_SUCCESS && all[0] == 1000;
    for (int r = 1; r < size; ++r)
      for (int i = 0; i < Block; ++i)
        ok = ok && all[r * Block + i] == 1000 * (r + 1) + i;
    char what[80];
    snprintf(what, sizeof what, "allgather %s, rank 0 sending 1 int of 10", formNames[form]);
    check(what, ok);
  }
  /* Alltoall: block j of rank q's input is 1000 (q + 1) + 100 j + i. */
  int *send = malloc(sizeof(int) * Block * (size_t)size);
  for (int j = 0; j < size; ++j)
    for (int i = 0; i < Block; ++i)
      send[j * Block + i] = 1000 * (rank + 1) + 100 * j + i;
  for (int form = 0; form < Forms; ++form) {
    for (int i = 0; i < Block * size; ++i)
      all[i] = -1;
    /* Rank 0 sends the first int of each block, laid out as one int per block. */
    int *packed = malloc(sizeof(int) * (size_t)size);
    for (int j = 0; j < size; ++j)
      packed[j] = send[j * Block];
    const void *from = rank == 0 ? (const void *)packed : (const void *)send;
    const int sendcount = rank == 0 ? 1 : Block;
    MPI_Request req = MPI_REQUEST_NULL;
    int rc;
    if (form == Blocking)
      rc = MPI_Alltoall(from, sendcount, MPI_INT, all, Block, MPI_INT, MPI_COMM_WORLD);
    else if (form == NonBlocking)
      rc = MPI_Ialltoall(from, sendcount, MPI_INT, all, Block, MPI_INT, MPI_COMM_WORLD, &req);
    else
      rc = ALLTOALL_INIT(from, sendcount, MPI_INT, all, Block, MPI_INT, MPI_COMM_WORLD,
                         MPI_INFO_NULL, &req);
    complete(&req, form, NULL);
    int ok = rc == MPI_SUCCESS && all[0] == 1000 + 100 * rank;
    for (int q = 1; q < size; ++q)
      for (int i = 0; i < Block; ++i)
        ok = ok && all[q * Block + i] == 1000 * (q + 1) + 100 * rank + i;
    char what[80];
    snprintf(what, sizeof what, "alltoall %s, rank 0 sending 1 int of 10", formNames[form]);
    check(what, ok);
    free(packed);
  }
  /* Scatter from rank 0, which receives 20 ints where its block is 10. */
  for (int form = 0; form < Forms; ++form) {
    for (int i = 0; i < Block * size; ++i)
      all[i] = -1;
    const int recvcount = rank == 0 ? 2 * Block : Block;
    MPI_Request req = MPI_REQUEST_NULL;
    int rc;
    if (form == Blocking)
      rc = MPI_Scatter(send, Block, MPI_INT, all, recvcount, MPI_INT, 0, MPI_COMM_WORLD);
    else if (form == NonBlocking)
      rc = MPI_Iscatter(send, Block, MPI_INT, all, recvcount, MPI_INT, 0, MPI_COMM_WORLD, &req);
    else
      rc = SCATTER_INIT(send, Block, MPI_INT, all, recvcount, MPI_INT, 0, MPI_COMM_WORLD,
                        MPI_INFO_NULL, &req);
    complete(&req, form, NULL);
    int ok = rc == MPI_SUCCESS;
    for (int i = 0; i < Block; ++i)
      ok = ok && all[i] == 1000 + 100 * rank + i;
    for (int i = Block; i < recvcount; ++i)
      ok = ok && all[i] == -1;
    char what[80];
    snprintf(what, sizeof what, "scatter %s, root 0 receiving 20 ints of 10", formNames[form]);
    check(what, ok);
  }
  free(send);
  free(all);
  const int rc = tally("shortsend");
  MPI_Finalize();
  return rc;
}
