/* tests/dropin/typeedges.c: bcast and allgather at the edges of what MPI
 * allows for their datatypes, where ranks describe one type signature
 * differently:
 *  - MPI_BOTTOM with a datatype of absolute addresses on some ranks, an
 *    ordinary buffer of ints on the others (blocking, non-blocking,
 *    persistent; allgather in place too);
 *  - a datatype of no bytes with a count whose elements overflow an int on
 *    some ranks, a zero count of ints on the others (nothing moves; every
 *    rank must still take the same path, or the job hangs);
 *  - a persistent allgather whose send datatype is derived and freed right
 *    after the _init, started three times.
 * Each rank checks its own results; rank 0 prints "typeedges: ok". Run
 * under the drop-in only: Open MPI 4.1's own persistent allgather (libnbc)
 * crashes in MPI_Start when the send datatype was freed after the _init.
 */
#include "selfcheck.h"

#include <stdlib.h>
#include <string.h>

static void checkRc(const char *what, int rc) {
  if (rc != MPI_SUCCESS) {
    ++failures;
    printf("rank %d: WRONG: %s returned %d\n", rank, what, rc);
  }
}

/* Every other int of buf (n of them), as one element addressed from
 * MPI_BOTTOM; its extent is 2n ints, so element k lies 2n ints further. */
static MPI_Datatype absoluteStrided(int *buf, int n) {
  MPI_Datatype vec, wide, abs;
  MPI_Type_vector(n, 1, 2, MPI_INT, &vec);
  MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * n * sizeof(int)), &wide);
  MPI_Aint where;
  MPI_Get_address(buf, &where);
  int one = 1;
  MPI_Type_create_struct(1, &one, &where, &wide, &abs);
  MPI_Type_commit(&abs);
  MPI_Type_free(&vec);
  MPI_Type_free(&wide);
  return abs;
}

/* A bcast of n ints from `root`; ranks of one parity (`bottomParity`) pass
 * MPI_BOTTOM and an absolute strided datatype, the others n ints. */
static void bcastBottom(int n, int root, int bottomParity, int form) {
  const int bottom = rank % 2 == bottomParity;
  int *buf = calloc((size_t)(2 * n) + 1, sizeof(int));
  const int step = bottom ? 2 : 1;
  for (int i = 0; rank == root && i < n; ++i)
    buf[step * i] = 300 + 5 * i + root;
  MPI_Datatype type = bottom ? absoluteStrided(buf, n) : MPI_INT;
  void *where = bottom ? MPI_BOTTOM : buf;
  const int count = bottom ? 1 : n;
  MPI_Request req = MPI_REQUEST_NULL;
  int rc;
  if (form == Blocking)
    rc = MPI_Bcast(where, count, type, root, MPI_COMM_WORLD);
  else if (form == NonBlocking)
    rc = MPI_Ibcast(where, count, type, root, MPI_COMM_WORLD, &req);
  else
    rc = BCAST_INIT(where, count, type, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
  complete(&req, form, bottom ? &type : NULL);
  char what[160];
  snprintf(what, sizeof what, "bcast %s MPI_BOTTOM n=%d root=%d (this rank %s)", formNames[form],
           n, root, bottom ? "from MPI_BOTTOM" : "plain ints");
  checkRc(what, rc);
  int ok = 1;
  for (int i = 0; i < n; ++i)
    ok = ok && buf[step * i] == 300 + 5 * i + root;
  for (int i = 0; bottom && i < n; ++i) /* the gaps stay as they were */
    ok = ok && buf[2 * i + 1] == 0;
  check(what, ok);
  free(buf);
}

/* An allgather of n ints per rank; ranks of one parity receive through
 * MPI_BOTTOM and an absolute strided datatype, the others into ints. */
static void allgatherBottom(int n, int bottomParity, int inPlace, int form) {
  const int bottom = rank % 2 == bottomParity;
  const int step = bottom ? 2 : 1;
  const int block = step * n; /* ints per rank's block */
  int *recv = calloc((size_t)(block * size) + 1, sizeof(int));
  int *send = malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; ++i) {
    send[i] = 2000 * rank + i;
    if (inPlace)
      recv[block * rank + step * i] = 2000 * rank + i;
  }
  MPI_Datatype type = bottom ? absoluteStrided(recv, n) : MPI_INT;
  void *where = bottom ? MPI_BOTTOM : recv;
  const int count = bottom ? 1 : n;
  const void *sb = inPlace ? MPI_IN_PLACE : send;
  MPI_Request req = MPI_REQUEST_NULL;
  int rc;
  if (form == Blocking)
    rc = MPI_Allgather(sb, n, MPI_INT, where, count, type, MPI_COMM_WORLD);
  else if (form == NonBlocking)
    rc = MPI_Iallgather(sb, n, MPI_INT, where, count, type, MPI_COMM_WORLD, &req);
  else
    rc = ALLGATHER_INIT(sb, n, MPI_INT, where, count, type, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
  complete(&req, form, bottom ? &type : NULL);
  char what[160];
  snprintf(what, sizeof what, "allgather %s MPI_BOTTOM n=%d%s (this rank %s)", formNames[form], n,
           inPlace ? " in place" : "", bottom ? "through MPI_BOTTOM" : "into ints");
  checkRc(what, rc);
  int ok = 1;
  for (int k = 0; k < size; ++k)
    for (int i = 0; i < n; ++i)
      ok = ok && recv[block * k + step * i] == 2000 * k + i;
  for (int j = 0; bottom && j < block * size; j += 2) /* the gaps stay as they were */
    ok = ok && recv[j + 1] == 0;
  check(what, ok);
  free(recv);
  free(send);
}

/* Nothing moves: ranks of one parity pass 600,000,000 elements of a
 * datatype of no bytes, the others 0 ints. The buffers stay untouched. */
static void noBytes(int form) {
  MPI_Datatype empty;
  MPI_Type_contiguous(0, MPI_INT, &empty);
  MPI_Type_commit(&empty);
  const int many = rank % 2 == 0;
  MPI_Datatype type = many ? empty : MPI_INT;
  const int count = many ? 600000000 : 0;
  int buf[4] = {7, 7, 7, 7}, send[4] = {9, 9, 9, 9};
  MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int rc1, rc2;
  if (form == Blocking) {
    rc1 = MPI_Bcast(buf, count, type, 0, MPI_COMM_WORLD);
    rc2 = MPI_Allgather(send, count, type, buf, count, type, MPI_COMM_WORLD);
  } else if (form == NonBlocking) {
    rc1 = MPI_Ibcast(buf, count, type, 0, MPI_COMM_WORLD, &reqs[0]);
    rc2 = MPI_Iallgather(send, count, type, buf, count, type, MPI_COMM_WORLD, &reqs[1]);
  } else {
    rc1 = BCAST_INIT(buf, count, type, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[0]);
    rc2 = ALLGATHER_INIT(send, count, type, buf, count, type, MPI_COMM_WORLD, MPI_INFO_NULL,
                         &reqs[1]);
    MPI_Startall(2, reqs);
  }
  if (form != Blocking)
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
  if (form == Persistent) {
    MPI_Request_free(&reqs[0]);
    MPI_Request_free(&reqs[1]);
  }
  MPI_Type_free(&empty);
  char what[160];
  snprintf(what, sizeof what, "bcast and allgather %s of no bytes (this rank %s)", formNames[form],
           many ? "600000000 empty elements" : "0 ints");
  checkRc(what, rc1);
  checkRc(what, rc2);
  check(what, buf[0] == 7 && buf[3] == 7 && send[0] == 9);
}

/* A persistent allgather of n ints per rank whose send side is a strided
 * vector, freed right after the _init; the receive side is ints. Started
 * three times with new data. */
static void persistentDerivedSend(int n) {
  int *send = calloc((size_t)(2 * n), sizeof(int));
  int *recv = calloc((size_t)(n * size), sizeof(int));
  MPI_Datatype vec;
  MPI_Type_vector(n, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  MPI_Request req;
  int rc = ALLGATHER_INIT(send, 1, vec, recv, n, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
  MPI_Type_free(&vec);
  int ok = 1;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < n; ++i)
      send[2 * i] = 10000 * round + 100 * rank + i;
    memset(recv, 0, sizeof(int) * (size_t)(n * size));
    MPI_Start(&req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int k = 0; k < size; ++k)
      for (int i = 0; i < n; ++i)
        ok = ok && recv[n * k + i] == 10000 * round + 100 * k + i;
  }
  MPI_Request_free(&req);
  char what[160];
  snprintf(what, sizeof what, "persistent allgather n=%d, send datatype freed after the init", n);
  checkRc(what, rc);
  check(what, ok);
  free(send);
  free(recv);
}

int main(int argc, char **argv) {
  begin(&argc, &argv);
  const int sizes[] = {3, 500, 40000};
  for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; ++z)
    for (int form = 0; form < Forms; ++form)
      for (int parity = 0; parity < 2; ++parity) {
        for (int root = 0; root < size && root < 3; ++root)
          bcastBottom(sizes[z], root, parity, form);
        allgatherBottom(sizes[z], parity, 0, form);
        allgatherBottom(sizes[z], parity, 1, form);
      }
  for (int form = 0; form < Forms; ++form)
    noBytes(form);
  persistentDerivedSend(5);
  persistentDerivedSend(30000);
  const int status = tally("typeedges");
  MPI_Finalize();
  return status;
}
