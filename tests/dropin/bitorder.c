/* tests/dropin/bitorder.c: every rank gets the same bits from MPI_Allreduce
 * with operations whose bits depend on the order of their operands.
 *
 * A plain MPI program. MPI lets an implementation combine the operands of a
 * commutative operation in any order, but ranks that compare results of one
 * allreduce must see the same value: they branch on it. The operations here
 * are declared commutative (commute = 1) yet give other bits when their
 * operands are swapped:
 *  - first:   a ∘ b = a on one MPI_UINT64_T (associative; the bits show which
 *             operand came first);
 *  - matmul:  2×2 matrix product modulo 2^64 on a contiguous type of four
 *             MPI_UINT64_T (associative, not commutative);
 *  - welford: merging (count, mean, M2) triples of doubles, the pairwise
 *             variance update (commutative in exact arithmetic only);
 *  - MPI_SUM on doubles holding NaNs with a different payload per rank (which
 *             payload survives depends on the operand order).
 * For each operation, count and form (blocking, MPI_IN_PLACE, MPI_Iallreduce)
 * every rank hashes its result and the hashes are compared. Prints "bitorder: ok" or
 * one line per case whose ranks disagree.
 */
#include <mpi.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv(const void *data, size_t n) {
  const unsigned char *p = (const unsigned char *)data;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static void opFirst(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  memcpy(inout, in, sizeof(uint64_t) * (size_t)*len);
}

static void opMatmul(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  const uint64_t *a = (const uint64_t *)in;
  uint64_t *b = (uint64_t *)inout;
  for (int i = 0; i < *len; ++i, a += 4, b += 4) {
    const uint64_t c0 = a[0] * b[0] + a[1] * b[2], c1 = a[0] * b[1] + a[1] * b[3];
    const uint64_t c2 = a[2] * b[0] + a[3] * b[2], c3 = a[2] * b[1] + a[3] * b[3];
    b[0] = c0, b[1] = c1, b[2] = c2, b[3] = c3;
  }
}

/* inout = merge(in, inout) of (n, mean, M2) triples (Chan et al.). */
static void opWelford(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  const double *a = (const double *)in;
  double *b = (double *)inout;
  for (int i = 0; i < *len; ++i, a += 3, b += 3) {
    const double n = a[0] + b[0];
    if (n == 0)
      continue;
    const double delta = b[1] - a[1];
    const double mean = a[1] + delta * (b[0] / n);
    const double m2 = a[2] + b[2] + delta * delta * (a[0] * b[0] / n);
    b[0] = n, b[1] = mean, b[2] = m2;
  }
}

enum { maxCount = 1000 };

struct Case {
  const char *name;
  MPI_Datatype type;
  MPI_Op op;
  size_t elemBytes;
  void (*fill)(void *buf, int count, int rank);
};

static void fillFirst(void *buf, int count, int rank) {
  uint64_t *x = (uint64_t *)buf;
  for (int i = 0; i < count; ++i)
    x[i] = 0x1000ull * (uint64_t)(rank + 1) + (uint64_t)i;
}

static void fillMatmul(void *buf, int count, int rank) {
  uint64_t *x = (uint64_t *)buf;
  for (int i = 0; i < count; ++i, x += 4) {
    x[0] = 1 + (uint64_t)rank, x[1] = (uint64_t)i + 2;
    x[2] = 3 * (uint64_t)rank + 1, x[3] = (uint64_t)(rank ^ i) + 5;
  }
}

static void fillWelford(void *buf, int count, int rank) {
  double *x = (double *)buf;
  for (int i = 0; i < count; ++i, x += 3) {
    x[0] = 1 + (rank + i) % 3;
    x[1] = 0.1 * rank + 1.0 / (i + 3);
    x[2] = 0.7 / (rank + 1) + 0.01 * i;
  }
}

/* NaNs with per-rank payloads among ordinary numbers. */
static void fillNan(void *buf, int count, int rank) {
  double *x = (double *)buf;
  for (int i = 0; i < count; ++i) {
    if ((i + rank) % 2 == 0) {
      uint64_t bits = 0x7ff8000000000000ull | (uint64_t)(rank * 131 + i + 1);
      memcpy(&x[i], &bits, sizeof bits);
    } else {
      x[i] = 0.1 * rank + i;
    }
  }
}

static int rank, size, failures;

/* Compares every rank's hash of `out` with rank 0's. */
static void check(const char *caseName, const char *form, int count, const void *out,
                  size_t bytes) {
  uint64_t h = fnv(out, bytes), *all = malloc(sizeof(uint64_t) * (size_t)size);
  MPI_Allgather(&h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
  for (int r = 1; r < size; ++r)
    if (all[r] != all[0]) {
      if (rank == 0)
        printf("bitorder: %s %s count %d: rank %d's result differs from rank 0's\n", caseName,
               form, count, r);
      ++failures;
      break;
    }
  free(all);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  MPI_Datatype tMat, tTriple;
  MPI_Type_contiguous(4, MPI_UINT64_T, &tMat);
  MPI_Type_commit(&tMat);
  MPI_Type_contiguous(3, MPI_DOUBLE, &tTriple);
  MPI_Type_commit(&tTriple);
  MPI_Op first, matmul, welford;
  MPI_Op_create(opFirst, 1, &first);
  MPI_Op_create(opMatmul, 1, &matmul);
  MPI_Op_create(opWelford, 1, &welford);

  const struct Case cases[] = {
      {"first", MPI_UINT64_T, first, 8, fillFirst},
      {"matmul", tMat, matmul, 32, fillMatmul},
      {"welford", tTriple, welford, 24, fillWelford},
      {"nan-sum", MPI_DOUBLE, MPI_SUM, 8, fillNan},
  };
  const int counts[] = {1, 2, 3, 7, 64, maxCount};
  char *in = malloc(32 * maxCount), *out = malloc(32 * maxCount);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const struct Case *k = &cases[c];
    for (size_t j = 0; j < sizeof counts / sizeof counts[0]; ++j) {
      const int n = counts[j];
      const size_t bytes = k->elemBytes * (size_t)n;
      k->fill(in, n, rank);
      MPI_Allreduce(in, out, n, k->type, k->op, MPI_COMM_WORLD);
      check(k->name, "blocking", n, out, bytes);

      k->fill(out, n, rank);
      MPI_Allreduce(MPI_IN_PLACE, out, n, k->type, k->op, MPI_COMM_WORLD);
      check(k->name, "in-place", n, out, bytes);

      MPI_Request req;
      MPI_Iallreduce(in, out, n, k->type, k->op, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      check(k->name, "non-blocking", n, out, bytes);
    }
  }
  MPI_Op_free(&first);
  MPI_Op_free(&matmul);
  MPI_Op_free(&welford);
  MPI_Type_free(&tMat);
  MPI_Type_free(&tTriple);
  free(in);
  free(out);
  if (rank == 0 && failures == 0)
    printf("bitorder: ok\n");
  MPI_Finalize();
  return failures != 0;
}
