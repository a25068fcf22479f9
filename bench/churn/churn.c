/* bench/churn/churn.c: communicators that come and go, as libraries make them
 * for their objects. Plain MPI (collc is not named): run it natively and
 * under the drop-in (LD_PRELOAD=libcollc_mpi.so) and compare.
 *
 *   collc-churn [ITERATIONS] [CALLS]
 *
 * Prints, in microseconds per iteration (the slowest rank's time, median of
 * five rounds):
 *   dup    MPI_Comm_dup of MPI_COMM_WORLD, then an 8-byte MPI_Allreduce,
 *          an MPI_Iallreduce waited for and an 8-byte MPI_Bcast on it, then
 *          MPI_Comm_free;
 *   split  the same on MPI_Comm_split(MPI_COMM_WORLD, rank % 2);
 *   reuse  CALLS (default 100000) 8-byte MPI_Allreduce calls on one
 *          communicator made for them, per call: the communicator used many
 *          times, which must not lose what the churning one gains.
 * Every result is checked; a wrong one exits 1. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

static int rank, size;

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "collc-churn: rank %d: wrong result of %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* The three calls on `comm`, their results checked. */
static void calls(MPI_Comm comm) {
  int n = 0, r = 0;
  MPI_Comm_size(comm, &n);
  MPI_Comm_rank(comm, &r);
  double in = r + 1, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, comm);
  check(out == n * (n + 1) / 2.0, "MPI_Allreduce");
  long long li = r, lo = -1;
  MPI_Request req;
  MPI_Iallreduce(&li, &lo, 1, MPI_LONG_LONG, MPI_MAX, comm, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  check(lo == n - 1, "MPI_Iallreduce");
  double b = r == 0 ? 42.5 : 0;
  MPI_Bcast(&b, 1, MPI_DOUBLE, 0, comm);
  check(b == 42.5, "MPI_Bcast");
}

/* Seconds per iteration of `mode` over `iters`, the slowest rank's. */
static double round_of(int mode, int iters, int reuseCalls) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  if (mode == 2) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    double in = 1, out = 0;
    for (int i = 0; i < reuseCalls; ++i) {
      MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, c);
      check(out == size, "MPI_Allreduce (reuse)");
    }
    MPI_Comm_free(&c);
  } else {
    for (int i = 0; i < iters; ++i) {
      MPI_Comm c;
      if (mode == 0)
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
      else
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c);
      calls(c);
      MPI_Comm_free(&c);
    }
  }
  double t = (MPI_Wtime() - t0) / (mode == 2 ? reuseCalls : iters), slowest = 0;
  MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int iters = argc > 1 ? atoi(argv[1]) : 200, reuse = argc > 2 ? atoi(argv[2]) : 100000;
  if (iters < 1 || reuse < 1) {
    if (rank == 0)
      fprintf(stderr, "usage: collc-churn [ITERATIONS] [CALLS]\n");
    MPI_Finalize();
    return 2;
  }
  static const char *names[] = {"dup", "split", "reuse"};
  for (int mode = 0; mode < 3; ++mode) {
    round_of(mode, iters / 10 + 1, reuse / 10 + 1); /* warm-up */
    double t[5];
    for (int k = 0; k < 5; ++k)
      t[k] = round_of(mode, iters, reuse);
    qsort(t, 5, sizeof t[0], compare);
    if (rank == 0)
      printf("%-6s %10.2f us\n", names[mode], t[2] * 1e6);
  }
  MPI_Finalize();
  return 0;
}
