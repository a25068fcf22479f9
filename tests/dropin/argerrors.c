/* tests/dropin/argerrors.c: calls MPI defines as erroneous, under
 * MPI_ERRORS_RETURN — the drop-in must answer each as native MPI does (the
 * same error class, the buffers left as native leaves them), which it does
 * by handing them to native MPI. Every rank makes the same call, so native
 * MPI's own checks (on entry, before any message) do not part the ranks.
 * Rank 0 prints one line per case: every rank's error class and a checksum
 * of its buffer after the call; tests/dropin/compare.sh compares the lines
 * with native MPI's. */
#include <mpi.h>
#if defined(OPEN_MPI) && MPI_VERSION < 4
#include <mpi-ext.h> /* MPIX_Allreduce_init */
#endif

#include <stdio.h>
#include <stdlib.h>

#if defined(OPEN_MPI) && MPI_VERSION < 4
#define ALLREDUCE_INIT MPIX_Allreduce_init
#else
#define ALLREDUCE_INIT MPI_Allreduce_init
#endif

enum { N = 4 };

static int rank, size;

/* x[i] = 100 (rank + 1) + i over `n` elements. */
static void fill(double *x, int n) {
  for (int i = 0; i < n; ++i)
    x[i] = 100.0 * (rank + 1) + i;
}

static double checksum(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i)
    s += x[i] * (i + 1);
  return s;
}

/* Rank 0 prints `what`, then each rank's error class and checksum. */
static void report(const char *what, int rc, const double *x, int n) {
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS)
    MPI_Error_class(rc, &cls);
  double mine[2] = {(double)cls, checksum(x, n)};
  double *all = malloc(sizeof(double) * 2 * (size_t)size);
  MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("%s:", what);
    for (int r = 0; r < size; ++r)
      printf(" [class %d, checksum %.1f]", (int)all[2 * r], all[2 * r + 1]);
    printf("\n");
  }
  free(all);
}

/* Waits for a request a call returned, if it returned one. */
static void finish(int rc, MPI_Request *req, int persistent) {
  if (rc != MPI_SUCCESS || *req == MPI_REQUEST_NULL)
    return;
  if (persistent)
    MPI_Start(req);
  MPI_Wait(req, MPI_STATUS_IGNORE);
  if (persistent)
    MPI_Request_free(req);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int n = N * size; /* room for allgather and reduce_scatter_block */
  double *x = malloc(sizeof(double) * (size_t)n);
  double *y = malloc(sizeof(double) * (size_t)n);
  MPI_Request req;
  int rc;

  /* The send buffer is the receive buffer, without MPI_IN_PLACE. */
  fill(x, n);
  rc = MPI_Allreduce(x, x, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  report("allreduce, the same buffer twice, 4 elements", rc, x, N);
  fill(x, n);
  rc = MPI_Allreduce(x, x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  report("allreduce, the same buffer twice, 1 element", rc, x, N);
  fill(x, n);
  req = MPI_REQUEST_NULL;
  rc = MPI_Iallreduce(x, x, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
  finish(rc, &req, 0);
  report("iallreduce, the same buffer twice", rc, x, N);
  fill(x, n);
  req = MPI_REQUEST_NULL;
  rc = ALLREDUCE_INIT(x, x, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
  finish(rc, &req, 1);
  report("allreduce_init, the same buffer twice", rc, x, N);
  fill(x, n);
  rc = MPI_Scan(x, x, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  report("scan, the same buffer twice", rc, x, N);
  fill(x, n);
  rc = MPI_Exscan(x, x, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  report("exscan, the same buffer twice", rc, x, N);
  fill(x, n);
  rc = MPI_Reduce_scatter_block(x, x, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  report("reduce_scatter_block, the same buffer twice", rc, x, n);

  /* MPI_IN_PLACE where the call does not take it, counts, handles. */
  fill(x, n);
  rc = MPI_Allreduce(x, MPI_IN_PLACE, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  report("allreduce, MPI_IN_PLACE as the receive buffer", rc, x, N);
  fill(x, n);
  fill(y, n);
  rc = MPI_Allreduce(x, y, -1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  report("allreduce, count -1", rc, y, N);
  fill(y, n);
  rc = MPI_Allreduce(x, y, N, MPI_DOUBLE, MPI_OP_NULL, MPI_COMM_WORLD);
  report("allreduce, MPI_OP_NULL", rc, y, N);
  fill(y, n);
  rc = MPI_Allreduce(x, y, N, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD);
  report("allreduce, MPI_DATATYPE_NULL", rc, y, N);
  fill(y, n);
  rc = MPI_Reduce(x, y, N, MPI_DOUBLE, MPI_SUM, size, MPI_COMM_WORLD);
  report("reduce, root = size", rc, y, N);
  fill(y, n);
  rc = MPI_Bcast(y, N, MPI_DOUBLE, -1, MPI_COMM_WORLD);
  report("bcast, root -1", rc, y, N);

  /* The block movers: negative counts, null datatypes on a side MPI reads,
   * a root out of range. (An alltoall given one buffer twice is not here:
   * Open MPI 4.1 runs it, and what it leaves depends on timing. The drop-in
   * hands it to native MPI.) */
  fill(x, n);
  fill(y, n);
  rc = MPI_Alltoall(x, 1, MPI_DOUBLE, y, -1, MPI_DOUBLE, MPI_COMM_WORLD);
  report("alltoall, recvcount -1", rc, y, n);
  fill(y, n);
  rc = MPI_Alltoall(x, 1, MPI_DOUBLE, y, 1, MPI_DATATYPE_NULL, MPI_COMM_WORLD);
  report("alltoall, recvtype MPI_DATATYPE_NULL", rc, y, n);
  fill(y, n);
  rc = MPI_Gather(x, 1, MPI_DATATYPE_NULL, y, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  report("gather, sendtype MPI_DATATYPE_NULL", rc, y, n);
  fill(y, n);
  rc = MPI_Gather(x, -1, MPI_DOUBLE, y, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  report("gather, sendcount -1", rc, y, n);
  fill(y, n);
  rc = MPI_Scatter(x, 1, MPI_DOUBLE, y, 1, MPI_DOUBLE, size, MPI_COMM_WORLD);
  report("scatter, root = size", rc, y, n);
  fill(y, n);
  req = MPI_REQUEST_NULL;
  rc = MPI_Ialltoall(x, 1, MPI_DOUBLE, y, -1, MPI_DOUBLE, MPI_COMM_WORLD, &req);
  finish(rc, &req, 0);
  report("ialltoall, recvcount -1", rc, y, n);
  fill(y, n);
  rc = MPI_Barrier(MPI_COMM_NULL);
  report("barrier, MPI_COMM_NULL", rc, y, n);
  req = MPI_REQUEST_NULL;
  rc = MPI_Ibarrier(MPI_COMM_NULL, &req);
  finish(rc, &req, 0);
  report("ibarrier, MPI_COMM_NULL", rc, y, n);

  /* Correct calls after the errors: the communicator still works. */
  fill(x, n);
  rc = MPI_Allreduce(MPI_IN_PLACE, x, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  report("allreduce in place afterwards", rc, x, N);
  free(x);
  free(y);
  MPI_Finalize();
  return 0;
}
