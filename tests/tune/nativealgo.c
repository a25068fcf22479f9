/* tests/tune/nativealgo.c: which algorithm did the MPI itself run, and was
 * it right? For the tuning files `collc tune --emit` writes (docs/tune.md,
 * "Tuning files for MPIs' own algorithms").
 *
 *   nativealgo signature BYTES...   one line per size: BYTES and a signature
 *                                   of the allreduce's combining tree
 *   nativealgo check BYTES...       every collective collc tunes, at each
 *                                   size, against the known result
 *
 * The signature: MPI_Allreduce(MPI_MAX) of +0.0 and -0.0 (below), whose
 * result's signs depend on which ranks' values were combined in which tree
 * and order — on the algorithm. Two runs print the same signature when they
 * ran the same algorithm; every rank's result goes into it. (A built-in
 * operation: MPICH runs some algorithms for built-in operations only.) `check` uses MPI_SUM on
 * integers, whose result does not depend on the order. Exit 0: all right;
 * 1: a wrong result (named on stderr); 2: misuse. */
#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fold(const uint64_t *v, size_t n) {
  uint64_t h = UINT64_C(1469598103934665603);
  for (size_t i = 0; i < n; ++i)
    h = (h ^ v[i]) * UINT64_C(1099511628211);
  return h;
}

/* MPI_MAX of +0.0 and -0.0 is a tie: which of the two an MPI keeps depends
 * on which operand it was, so the signs of the result tell the combining
 * tree and operand order apart. Rank r's element i is -0.0 where bit r of i's
 * mixed index is set: every pattern of signs across ranks occurs. */
static int signature(size_t bytes, int me, int p) {
  const size_t n = bytes / sizeof(double);
  double *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t bits = (uint64_t)i * UINT64_C(0x9E3779B97F4A7C15) >> 7;
    in[i] = (bits >> (me % 64)) & 1 ? -0.0 : 0.0;
  }
  MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  uint64_t *signs = calloc((n + 63) / 64, sizeof *signs);
  for (size_t i = 0; i < n; ++i)
    if (signbit(out[i]))
      signs[i / 64] |= UINT64_C(1) << (i % 64);
  uint64_t mine = fold(signs, (n + 63) / 64), *all = malloc((size_t)p * sizeof *all);
  MPI_Gather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (me == 0)
    printf("%zu %016" PRIx64 "\n", bytes, fold(all, (size_t)p));
  free(in), free(out), free(signs), free(all);
  return 0;
}

/* Rank r's element i is r·n + i + 1, so every sum is known in closed form. */
static int64_t value(int r, size_t n, size_t i) { return (int64_t)((size_t)r * n + i + 1); }

static int check(size_t bytes, int me, int p) {
  const size_t n = bytes / sizeof(int64_t), b = n / (size_t)p;
  int64_t *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
  int bad = 0;
  const char *what = "";
  for (size_t i = 0; i < n; ++i)
    in[i] = value(me, n, i);
    /* The sum over ranks r < k of r·n + i + 1. */
#define PREFIX(k, i) ((int64_t)(n * ((size_t)(k) * ((size_t)(k)-1) / 2) + (size_t)(k) * ((i) + 1)))
  MPI_Allreduce(in, out, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  for (size_t i = 0; i < n; ++i)
    if (out[i] != PREFIX(p, i))
      bad = 1, what = "allreduce";
  memset(out, 0, n * sizeof *out);
  MPI_Reduce(in, out, (int)n, MPI_INT64_T, MPI_SUM, p - 1, MPI_COMM_WORLD);
  for (size_t i = 0; me == p - 1 && i < n; ++i)
    if (out[i] != PREFIX(p, i))
      bad = 1, what = "reduce";
  MPI_Scan(in, out, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  for (size_t i = 0; i < n; ++i)
    if (out[i] != PREFIX(me + 1, i))
      bad = 1, what = "scan";
  MPI_Exscan(in, out, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  for (size_t i = 0; me > 0 && i < n; ++i)
    if (out[i] != PREFIX(me, i))
      bad = 1, what = "exscan";
  if (b > 0) {
    MPI_Reduce_scatter_block(in, out, (int)b, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    for (size_t i = 0; i < b; ++i)
      if (out[i] != PREFIX(p, (size_t)me * b + i))
        bad = 1, what = "reduce_scatter_block";
    MPI_Allgather(in, (int)b, MPI_INT64_T, out, (int)b, MPI_INT64_T, MPI_COMM_WORLD);
    for (size_t i = 0; i < b * (size_t)p; ++i)
      if (out[i] != value((int)(i / b), n, i % b))
        bad = 1, what = "allgather";
  }
  for (size_t i = 0; i < n; ++i)
    out[i] = me == 1 % p ? in[i] : 0;
  MPI_Bcast(out, (int)n, MPI_INT64_T, 1 % p, MPI_COMM_WORLD);
  for (size_t i = 0; i < n; ++i)
    if (out[i] != value(1 % p, n, i))
      bad = 1, what = "bcast";
  if (bad)
    fprintf(stderr, "nativealgo: rank %d: %s of %zu bytes is wrong\n", me, what, bytes);
  free(in), free(out);
  return bad;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, p = 1, rc = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const int sig = argc > 1 && strcmp(argv[1], "signature") == 0;
  if (argc < 3 || (!sig && strcmp(argv[1], "check") != 0)) {
    if (me == 0)
      fprintf(stderr, "usage: nativealgo signature|check BYTES...\n");
    MPI_Finalize();
    return 2;
  }
  for (int a = 2; a < argc; ++a) {
    char *end = NULL;
    const unsigned long long bytes = strtoull(argv[a], &end, 10);
    if (*end || bytes < 8 || bytes % 8 || bytes > (1ull << 30)) {
      if (me == 0)
        fprintf(stderr, "nativealgo: '%s' is not a size of 8 bytes to 1 GiB in whole words\n",
                argv[a]);
      rc = 2;
      break;
    }
    rc |= sig ? signature((size_t)bytes, me, p) : check((size_t)bytes, me, p);
  }
  int any = 0;
  MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
