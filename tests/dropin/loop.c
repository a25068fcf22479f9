/* tests/dropin/loop.c: many back-to-back small collectives, and memory that
 * stays flat (the resident set size of every rank grows by less than 4 MiB
 * between the end of a warm-up and the end of each phase).
 *
 * usage: loop [ITERATIONS]   (default 100000)
 * Phases: ITERATIONS MPI_Allreduce of one double; ITERATIONS/10 pairs of
 * MPI_Iallreduce + MPI_Wait; ITERATIONS/10 MPI_Allreduce cycling through 8
 * buffers (more than an interposer's request cache holds); ITERATIONS/10
 * MPI_Reduce to rotating roots. Output is the same with or without an
 * interposer: sums (exact) and "flat" per phase.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long rssKiB(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  if (!f)
    return -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0) {
      kib = strtol(line + 6, NULL, 10);
      break;
    }
  fclose(f);
  return kib;
}

static int rank, size;

static void check(const char *phase, long base, double sum) {
  long grown = rssKiB() - base, worst = 0;
  MPI_Reduce(&grown, &worst, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s: sum %.0f, memory %s\n", phase, sum, worst < 4096 ? "flat" : "grew");
  if (rank == 0 && worst >= 4096)
    fprintf(stderr, "%s: the resident set grew by %ld KiB\n", phase, worst);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long iters = argc > 1 ? atol(argv[1]) : 100000;
  double x, y, sum = 0;
  for (int i = 0; i < 1000; ++i) { /* warm-up: plans made, caches filled */
    x = rank + i % 3;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Request r;
    MPI_Iallreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Reduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, i % size, MPI_COMM_WORLD);
  }
  const long base = rssKiB();

  for (long i = 0; i < iters; ++i) {
    x = (double)(rank + i % 7);
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    sum += y;
  }
  check("allreduce", base, sum);

  sum = 0;
  for (long i = 0; i < iters / 10; ++i) {
    MPI_Request r;
    x = (double)(rank * 2 + i % 5);
    MPI_Iallreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    sum += y;
  }
  check("iallreduce+wait", base, sum);

  sum = 0;
  double bx[8][4], by[8][4];
  for (long i = 0; i < iters / 10; ++i) {
    const int b = (int)(i % 8);
    for (int k = 0; k < 4; ++k)
      bx[b][k] = (double)(rank + k + b);
    MPI_Allreduce(bx[b], by[b], 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    sum += by[b][0] + by[b][3];
  }
  check("allreduce, 8 buffers", base, sum);

  sum = 0;
  for (long i = 0; i < iters / 10; ++i) {
    const int root = (int)(i % size);
    x = (double)(rank + 1);
    y = 0;
    MPI_Reduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
    if (rank == root)
      sum += y;
  }
  double all = 0;
  MPI_Allreduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  check("reduce, rotating roots", base, all);
  MPI_Finalize();
  return 0;
}
