/* tests/dropin/shortsend.c: an MPI_Allgather where rank 0 sends one int and
 * every rank receives 10 per rank — an erroneous program (the type
 * signatures differ) that native Open MPI completes. Under the drop-in the
 * other ranks decide on the receive side and run a plan; rank 0 must run it
 * too (going native alone would hang the job). Blocking, non-blocking and
 * persistent; every block but rank 0's is checked in full, and rank 0's
 * first int, which it did send, on every rank. Rank 0 prints
 * "shortsend: ok". */
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
  free(all);
  const int rc = tally("shortsend");
  MPI_Finalize();
  return rc;
}
