/* bench/dropin/vs_pmpi.c: MPI_Alltoall, MPI_Gather and MPI_Scatter, and
 * MPI_Alltoallv, MPI_Gatherv and MPI_Scatterv with even counts, timed
 * through MPI_* and through PMPI_* in the same process, interleaved. Under
 * LD_PRELOAD=libcollc_mpi.so the MPI_* calls are the drop-in's and the PMPI_*
 * ones native MPI's, so each ratio is the drop-in's time over native's in one
 * run (bench/dropin-blocks-table.sh); without it both are native.
 *
 * usage: collc-dropin-vs-pmpi ROUNDS ITERS SIZE...
 * Sizes in bytes, of doubles: a rank's whole buffer for alltoall, the root's
 * (root 0) for gather and scatter, rounded down to whole doubles per block
 * (one at least). Each round times ITERS calls of one way, then ITERS of the
 * other (the first alternates between rounds), each loop started after a
 * barrier; a loop's time is the slowest rank's, divided by ITERS. Rank 0
 * prints "COLLECTIVE BYTES PMPI_US MPI_US" per collective and size, the
 * medians over the rounds. The last call's result of each way is checked; a
 * wrong one prints "WRONG" and exits 1. Plain MPI. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

enum { Alltoall, Gather, Scatter, Alltoallv, Gatherv, Scatterv, Calls };
static const char *const names[Calls] = {"alltoall",  "gather",  "scatter",
                                         "alltoallv", "gatherv", "scatterv"};
static int rank, size;
static int *counts, *displs; /* the v-variants': m per block, one after another */

static void call(int which, int viaPmpi, const double *in, double *out, int m) {
  switch (which) {
  case Alltoallv:
    if (viaPmpi)
      PMPI_Alltoallv(in, counts, displs, MPI_DOUBLE, out, counts, displs, MPI_DOUBLE,
                     MPI_COMM_WORLD);
    else
      MPI_Alltoallv(in, counts, displs, MPI_DOUBLE, out, counts, displs, MPI_DOUBLE,
                    MPI_COMM_WORLD);
    break;
  case Gatherv:
    if (viaPmpi)
      PMPI_Gatherv(in, m, MPI_DOUBLE, out, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    else
      MPI_Gatherv(in, m, MPI_DOUBLE, out, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    break;
  case Scatterv:
    if (viaPmpi)
      PMPI_Scatterv(in, counts, displs, MPI_DOUBLE, out, m, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    else
      MPI_Scatterv(in, counts, displs, MPI_DOUBLE, out, m, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    break;
  case Alltoall:
    if (viaPmpi)
      PMPI_Alltoall(in, m, MPI_DOUBLE, out, m, MPI_DOUBLE, MPI_COMM_WORLD);
    else
      MPI_Alltoall(in, m, MPI_DOUBLE, out, m, MPI_DOUBLE, MPI_COMM_WORLD);
    break;
  case Gather:
    if (viaPmpi)
      PMPI_Gather(in, m, MPI_DOUBLE, out, m, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    else
      MPI_Gather(in, m, MPI_DOUBLE, out, m, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    break;
  default:
    if (viaPmpi)
      PMPI_Scatter(in, m, MPI_DOUBLE, out, m, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    else
      MPI_Scatter(in, m, MPI_DOUBLE, out, m, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    break;
  }
}

/* Whether this rank's result is wrong: element i of block j of rank q's
 * input is 1000 q + j (gather: j the root, 0). */
static int wrong(int which, const double *out, long m) {
  which %= 3; /* a v-variant's result is its plain form's */
  if (which == Gather && rank != 0)
    return 0; /* no result */
  const int blocks = which == Scatter ? 1 : size;
  for (int j = 0; j < blocks; ++j)
    for (long i = 0; i < m; ++i) {
      const double want = which == Alltoall  ? 1000.0 * j + rank
                          : which == Gather ? 1000.0 * j
                                            : (double)rank;
      if (out[j * m + i] != want)
        return 1;
    }
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 4) {
    if (rank == 0)
      fprintf(stderr, "usage: collc-dropin-vs-pmpi ROUNDS ITERS SIZE...\n");
    MPI_Finalize();
    return 2;
  }
  const int rounds = atoi(argv[1]), iters = atoi(argv[2]);
  long most = 8;
  for (int a = 3; a < argc; ++a)
    if (atol(argv[a]) > most)
      most = atol(argv[a]);
  const long elems = (most / 8 / size + 1) * size;
  counts = malloc(sizeof(int) * (size_t)size);
  displs = malloc(sizeof(int) * (size_t)size);
  double *in = malloc((size_t)elems * sizeof(double));
  double *out = malloc((size_t)elems * sizeof(double));
  double *t[2] = {malloc(sizeof(double) * (size_t)(rounds > 0 ? rounds : 1)),
                  malloc(sizeof(double) * (size_t)(rounds > 0 ? rounds : 1))};
  if (!in || !out || !t[0] || !t[1] || rounds < 1 || iters < 1)
    MPI_Abort(MPI_COMM_WORLD, 2);
  int bad = 0;
  for (int which = 0; which < Calls; ++which)
    for (int a = 3; a < argc; ++a) {
      long m = atol(argv[a]) / 8 / size;
      m = m < 1 ? 1 : m;
      for (int j = 0; j < size; ++j) { /* the v-variants' (set once: not timed) */
        counts[j] = (int)m;
        displs[j] = j * (int)m;
      }
      for (int j = 0; j < size; ++j)
        for (long i = 0; i < m; ++i)
          in[j * m + i] = 1000.0 * rank + j;
      if (which % 3 == Gather) /* one block, for the root */
        for (long i = 0; i < m; ++i)
          in[i] = 1000.0 * rank + 0;
      for (int r = 0; r < rounds; ++r)
        for (int k = 0; k < 2; ++k) {
          const int viaPmpi = (k + r) % 2;
          call(which, viaPmpi, in, out, (int)m); // warm-up
          MPI_Barrier(MPI_COMM_WORLD);
          const double t0 = MPI_Wtime();
          for (int i = 0; i < iters; ++i)
            call(which, viaPmpi, in, out, (int)m);
          double local = (MPI_Wtime() - t0) / iters;
          MPI_Allreduce(&local, &t[viaPmpi][r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
          bad |= wrong(which, out, m);
        }
      int anyBad = 0;
      MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
      qsort(t[0], (size_t)rounds, sizeof(double), cmp);
      qsort(t[1], (size_t)rounds, sizeof(double), cmp);
      if (rank == 0)
        printf("%s %ld %.3f %.3f%s\n", names[which], m * size * 8, t[1][rounds / 2] * 1e6,
               t[0][rounds / 2] * 1e6, anyBad ? " WRONG" : "");
      fflush(stdout);
      if (anyBad) {
        MPI_Finalize();
        return 1;
      }
    }
  free(in), free(out), free(t[0]), free(t[1]), free(counts), free(displs);
  MPI_Finalize();
  return 0;
}
