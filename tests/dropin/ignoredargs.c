/* tests/dropin/ignoredargs.c: buffers MPI says are not significant on some
 * ranks, passed as nothing there — legal MPI, so every rank must still take
 * the same path (a rank on native MPI beside ranks on a plan hangs):
 *  - MPI_Exscan's recvbuf on rank 0: NULL;
 *  - MPI_Reduce's recvbuf on a non-root: NULL, or MPI_IN_PLACE.
 * Blocking, non-blocking and persistent; each rank checks its results and
 * rank 0 prints "ignoredargs: ok".
 */
#include "selfcheck.h"

#include <stdlib.h>

static long value(int r, int i) { return 1000L * (r + 1) + i; }

static void exscanNoRecvOnRankZero(int n, int form) {
  long *in = malloc(sizeof(long) * (size_t)n);
  long *out = rank == 0 ? NULL : calloc((size_t)n, sizeof(long));
  for (int i = 0; i < n; ++i)
    in[i] = value(rank, i);
  MPI_Request req = MPI_REQUEST_NULL;
  int rc;
  if (form == Blocking)
    rc = MPI_Exscan(in, out, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  else if (form == NonBlocking)
    rc = MPI_Iexscan(in, out, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &req);
  else
    rc = EXSCAN_INIT(in, out, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
  complete(&req, form, NULL);
  int ok = rc == MPI_SUCCESS;
  for (int i = 0; rank > 0 && i < n; ++i) {
    long want = 0;
    for (int r = 0; r < rank; ++r)
      want += value(r, i);
    ok = ok && out[i] == want;
  }
  char what[120];
  snprintf(what, sizeof what, "exscan %s n=%d, rank 0 without recvbuf", formNames[form], n);
  check(what, ok);
  free(in);
  free(out);
}

/* `inPlaceMarker`: the non-roots pass MPI_IN_PLACE as recvbuf, else NULL. */
static void reduceNoRecvOffRoot(int n, int root, int inPlaceMarker, int form) {
  long *in = malloc(sizeof(long) * (size_t)n);
  long *out = NULL;
  if (rank == root)
    out = calloc((size_t)n, sizeof(long));
  else if (inPlaceMarker)
    out = MPI_IN_PLACE;
  for (int i = 0; i < n; ++i)
    in[i] = value(rank, i);
  MPI_Request req = MPI_REQUEST_NULL;
  int rc;
  if (form == Blocking)
    rc = MPI_Reduce(in, out, n, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD);
  else if (form == NonBlocking)
    rc = MPI_Ireduce(in, out, n, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD, &req);
  else
    rc = REDUCE_INIT(in, out, n, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
  complete(&req, form, NULL);
  int ok = rc == MPI_SUCCESS;
  for (int i = 0; rank == root && i < n; ++i) {
    long want = 0;
    for (int r = 0; r < size; ++r)
      want += value(r, i);
    ok = ok && out[i] == want;
  }
  char what[120];
  snprintf(what, sizeof what, "reduce %s n=%d root=%d, non-roots' recvbuf %s", formNames[form], n,
           root, inPlaceMarker ? "MPI_IN_PLACE" : "NULL");
  check(what, ok);
  free(in);
  if (rank == root)
    free(out);
}

int main(int argc, char **argv) {
  begin(&argc, &argv);
  const int sizes[] = {1, 700, 50000};
  for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; ++z)
    for (int form = 0; form < Forms; ++form) {
      exscanNoRecvOnRankZero(sizes[z], form);
      for (int marker = 0; marker < 2; ++marker)
        reduceNoRecvOffRoot(sizes[z], (int)z % size, marker, form);
    }
  const int status = tally("ignoredargs");
  MPI_Finalize();
  return status;
}
