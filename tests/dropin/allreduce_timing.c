/* tests/dropin/allreduce_timing.c: time an MPI_Allreduce loop (a benchmark
 * program, not a test) — run it natively and under libcollc_mpi.so to compare.
 *
 * usage: allreduce_timing [REPEATS]   (default 5)
 * For 8 B, 64 KiB and 1 MiB of doubles (MPI_SUM), it runs a warm-up and then
 * REPEATS timed batches of N calls (N = 20000, 2000, 200), each batch started
 * after a barrier; a batch's time is the slowest rank's. Prints the median
 * and the best batch, in microseconds per call.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int repeats = argc > 1 ? atoi(argv[1]) : 5;
  const long sizes[] = {8, 64 << 10, 1 << 20};
  const int calls[] = {20000, 2000, 200};
  double *in = malloc(1 << 20), *out = malloc(1 << 20);
  for (int i = 0; i < (1 << 20) / 8; ++i)
    in[i] = rank + i % 10;
  double *batch = malloc(sizeof(double) * (size_t)repeats);
  if (rank == 0)
    printf("%-8s %6s %12s %12s\n", "bytes", "ranks", "median-us", "best-us");
  for (int s = 0; s < 3; ++s) {
    const int n = (int)(sizes[s] / 8);
    for (int i = 0; i < calls[s] / 10; ++i)
      MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int r = 0; r < repeats; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int i = 0; i < calls[s]; ++i)
        MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      double t = (MPI_Wtime() - t0) / calls[s] * 1e6, worst;
      MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      batch[r] = worst;
    }
    qsort(batch, (size_t)repeats, sizeof(double), cmp);
    if (rank == 0)
      printf("%-8ld %6d %12.2f %12.2f\n", sizes[s], size, batch[repeats / 2], batch[0]);
  }
  free(in);
  free(out);
  free(batch);
  MPI_Finalize();
  return 0;
}
