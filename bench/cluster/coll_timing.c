/* bench/cluster/coll_timing.c: plain MPI timing of five collectives — what
 * an application sees, whichever MPI or interposed library serves it
 * (bench/cluster/native-table.sh runs it natively, with coll/han and under
 * libcollc_mpi.so).
 *
 * usage: collc-coll-timing ITERS SIZE...   (sizes in bytes of doubles)
 * For MPI_Allreduce, MPI_Reduce (root 0), MPI_Bcast (root 0), MPI_Allgather
 * and MPI_Reduce_scatter_block, each size is the whole vector (allgather: the
 * result, of which each rank gives 1/P; reduce_scatter_block: each rank's
 * input, of which it gets 1/P; rounded down to whole doubles per rank, one
 * at least). Each
 * call runs twice untimed, then ITERS times, each after a barrier; a call's
 * time is the slowest rank's. Rank 0 prints one line per collective and size:
 * "COLLECTIVE BYTES MEDIAN_US". The first timed call's result is checked
 * (sum of ranks' values); a wrong result prints "WRONG" and exits 1.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

enum { Allreduce, Reduce, Bcast, Allgather, ReduceScatterBlock, Calls };
static const char *const names[Calls] = {"allreduce", "reduce", "bcast", "allgather",
                                         "reduce_scatter_block"};

/* Runs `call` on n doubles (per rank's block: m); returns nonzero if rank's result is wrong. */
static int run(int call, double *in, double *out, long n, long m, int rank, int size) {
  switch (call) {
  case Allreduce:
    MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return n && out[n - 1] != (double)size * (size + 1) / 2;
  case Reduce:
    MPI_Reduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    return rank == 0 && n && out[n - 1] != (double)size * (size + 1) / 2;
  case Bcast:
    if (rank == 0)
      memcpy(out, in, (size_t)n * sizeof(double));
    MPI_Bcast(out, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return n && out[n - 1] != 1.0;
  case Allgather:
    MPI_Allgather(in, (int)m, MPI_DOUBLE, out, (int)m, MPI_DOUBLE, MPI_COMM_WORLD);
    return m && out[(long)size * m - 1] != (double)size;
  default:
    MPI_Reduce_scatter_block(in, out, (int)m, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return m && out[m - 1] != (double)size * (size + 1) / 2;
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3) {
    if (rank == 0)
      fprintf(stderr, "usage: collc-coll-timing ITERS SIZE...\n");
    MPI_Finalize();
    return 2;
  }
  const int iters = atoi(argv[1]);
  long most = 8;
  for (int a = 2; a < argc; ++a)
    if (atol(argv[a]) > most)
      most = atol(argv[a]);
  const long elems = most / 8 + size;
  double *in = malloc((size_t)elems * sizeof(double));
  double *out = malloc((size_t)elems * sizeof(double));
  double *t = malloc(sizeof(double) * (size_t)(iters > 0 ? iters : 1));
  if (!in || !out || !t || iters < 1)
    MPI_Abort(MPI_COMM_WORLD, 2);
  for (long i = 0; i < elems; ++i)
    in[i] = rank + 1;
  int wrong = 0;
  for (int call = 0; call < Calls; ++call)
    for (int a = 2; a < argc; ++a) {
      const long bytes = atol(argv[a]);
      long n = bytes / 8, m = n / size;
      if (call == Allgather || call == ReduceScatterBlock) {
        m = m < 1 ? 1 : m; /* at least one double per rank */
        n = m * size;      /* whole blocks */
      }
      for (int w = 0; w < 2; ++w)
        run(call, in, out, n, m, rank, size);
      for (int i = 0; i < iters; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        const int bad = run(call, in, out, n, m, rank, size);
        double local = MPI_Wtime() - t0;
        if (i == 0)
          wrong |= bad;
        MPI_Allreduce(&local, &t[i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      }
      int anyWrong = 0;
      MPI_Allreduce(&wrong, &anyWrong, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
      qsort(t, (size_t)iters, sizeof(double), cmp);
      if (rank == 0)
        printf("%s %ld %.1f%s\n", names[call], n * 8, t[iters / 2] * 1e6,
               anyWrong ? " WRONG" : "");
      fflush(stdout);
      if (anyWrong) {
        MPI_Finalize();
        return 1;
      }
    }
  free(in), free(out), free(t);
  MPI_Finalize();
  return 0;
}
