/* tests/dropin/lifetimes.c: a user operation or datatype freed while a
 * non-blocking collective that uses it is still pending.
 *
 * A plain MPI program. MPI says that freeing an operation (MPI_Op_free) or a
 * datatype (MPI_Type_free) marks it for deallocation and that pending
 * operations using it complete normally. Each case starts MPI_Iallreduce or
 * MPI_Ireduce calls, frees what they use, creates new datatypes and
 * operations (which may get the freed handles' values, among them a type of
 * the same size with its two ints swapped), and only then waits; then
 * blocking calls whose operation and datatype are remade between them.
 * Results are
 * exact integers; each rank checks its own against the sequential value and
 * rank 0 prints one line per case with a hash of every rank's verdict and
 * result, so the output is the same natively and under an interposer.
 */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

/* inout[i] += in[i] on ints (any contiguous type of ints). */
static void opIntSum(void *in, void *inout, int *len, MPI_Datatype *type) {
  int ints = 0;
  MPI_Type_size(*type, &ints);
  ints /= (int)sizeof(int);
  const int *a = (const int *)in;
  int *b = (int *)inout;
  for (long i = 0; i < (long)*len * ints; ++i)
    b[i] += a[i];
}

/* Pairs (x, y) of ints as affine maps t -> x*t + y, composed: in ∘ inout
 * applies inout first. Associative, not commutative; modulo 2^32. */
static void opAffine(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  const unsigned *a = (const unsigned *)in;
  unsigned *b = (unsigned *)inout;
  for (int i = 0; i < *len; ++i, a += 2, b += 2) {
    const unsigned x = a[0] * b[0], y = a[0] * b[1] + a[1];
    b[0] = x, b[1] = y;
  }
}

static uint64_t fnv(const void *data, size_t n, uint64_t h) {
  const unsigned char *p = (const unsigned char *)data;
  for (size_t i = 0; i < n; ++i)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static unsigned value(int r, long i, int k) { return (unsigned)(r * 7 + (int)(i % 11) * 3 + k); }

/* The sequential result of opIntSum over ranks for element i, int k. */
static unsigned sumValue(long i, int k) {
  unsigned s = 0;
  for (int r = 0; r < size; ++r)
    s += value(r, i, k);
  return s;
}

/* Rank order fold of opAffine: x[0] ∘ x[1] ∘ ... (x[0] applied last). */
static void affineValue(long i, unsigned out[2]) {
  unsigned x = 1, y = 0;
  for (int r = size - 1; r >= 0; --r) {
    const unsigned a0 = value(r, i, 0) | 1u, a1 = value(r, i, 1);
    const unsigned nx = a0 * x, ny = a0 * y + a1;
    x = nx, y = ny;
  }
  out[0] = x, out[1] = y;
}

/* Gathers every rank's (ok, hash) and prints one line on rank 0. */
static int report(const char *name, int ok, const void *result, size_t bytes) {
  uint64_t mine[2] = {(uint64_t)ok, result ? fnv(result, bytes, 0xcbf29ce484222325ull) : 0};
  uint64_t *all = malloc(sizeof mine * (size_t)size);
  MPI_Gather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  int allOk = 1;
  if (rank == 0) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (int r = 0; r < size; ++r) {
      allOk = allOk && all[2 * r] == 1;
      h = fnv(&all[2 * r], sizeof mine, h);
    }
    printf("%-40s %s %016llx\n", name, allOk ? "ok" : "WRONG", (unsigned long long)h);
  }
  free(all);
  return allOk;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  enum { maxN = 4096, inFlight = 3 };
  int *in = malloc(sizeof(int) * 2 * maxN * inFlight);
  int *out = malloc(sizeof(int) * 2 * maxN * inFlight);
  const long counts[] = {1, 7, 64, maxN};
  int good = 1;
  char name[96];

  /* 1. MPI_Op_free before MPI_Wait: allreduce and reduce at two roots, with
   *    several calls in flight on the same operation. */
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
    const long n = counts[c];
    for (int kind = 0; kind < 3; ++kind) {
      const int root = kind == 2 ? size - 1 : 0;
      MPI_Op op;
      MPI_Op_create(opIntSum, 1, &op);
      MPI_Request req[inFlight];
      for (int j = 0; j < inFlight; ++j) {
        for (long i = 0; i < n; ++i)
          in[j * n + i] = (int)value(rank, i, j);
        if (kind == 0)
          MPI_Iallreduce(in + j * n, out + j * n, (int)n, MPI_INT, op, MPI_COMM_WORLD, &req[j]);
        else
          MPI_Ireduce(in + j * n, out + j * n, (int)n, MPI_INT, op, root, MPI_COMM_WORLD, &req[j]);
      }
      MPI_Op_free(&op);
      int ok = op == MPI_OP_NULL;
      MPI_Op other; /* may reuse the freed handle's value */
      MPI_Op_create(opAffine, 0, &other);
      MPI_Waitall(inFlight, req, MPI_STATUSES_IGNORE);
      MPI_Op_free(&other);
      const int has = kind == 0 || rank == root;
      for (int j = 0; j < inFlight && has; ++j)
        for (long i = 0; i < n; ++i)
          ok = ok && (unsigned)out[j * n + i] == sumValue(i, j);
      snprintf(name, sizeof name, "op-freed %s count %ld",
               kind == 0 ? "iallreduce" : kind == 1 ? "ireduce root 0" : "ireduce root p-1", n);
      good &= report(name, ok, has ? out : NULL, has ? sizeof(int) * (size_t)(n * inFlight) : 0);
    }
  }

  /* 2. MPI_Type_free before MPI_Wait, then new types: one of the same size
   *    with its two ints swapped, which a pending call must not pick up. */
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
    const long n = counts[c];
    MPI_Op op;
    MPI_Op_create(opIntSum, 1, &op);
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    for (long i = 0; i < n; ++i)
      in[2 * i] = (int)value(rank, i, 0), in[2 * i + 1] = (int)value(rank, i, 1);
    MPI_Request req;
    MPI_Iallreduce(in, out, (int)n, pair, op, MPI_COMM_WORLD, &req);
    MPI_Type_free(&pair);
    int ok = pair == MPI_DATATYPE_NULL;
    MPI_Datatype made[4];
    const int lens[2] = {1, 1}, swapped[2] = {1, 0};
    for (int t = 0; t < 4; ++t) {
      MPI_Datatype base;
      if (t % 2 == 0)
        MPI_Type_indexed(2, lens, swapped, MPI_INT, &base);
      else
        MPI_Type_contiguous(3, MPI_INT, &base);
      MPI_Type_commit(&base);
      made[t] = base;
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int t = 0; t < 4; ++t)
      MPI_Type_free(&made[t]);
    MPI_Op_free(&op);
    for (long i = 0; i < n; ++i)
      ok = ok && (unsigned)out[2 * i] == sumValue(i, 0) &&
           (unsigned)out[2 * i + 1] == sumValue(i, 1);
    snprintf(name, sizeof name, "type-freed iallreduce count %ld", n);
    good &= report(name, ok, out, sizeof(int) * 2 * (size_t)n);
  }

  /* 3. Both freed, non-commutative operation (rank order matters), in place. */
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
    const long n = counts[c];
    MPI_Op op;
    MPI_Op_create(opAffine, 0, &op);
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_UNSIGNED, &pair);
    MPI_Type_commit(&pair);
    unsigned *u = (unsigned *)out;
    for (long i = 0; i < n; ++i)
      u[2 * i] = value(rank, i, 0) | 1u, u[2 * i + 1] = value(rank, i, 1);
    MPI_Request req;
    MPI_Iallreduce(MPI_IN_PLACE, u, (int)n, pair, op, MPI_COMM_WORLD, &req);
    MPI_Op_free(&op);
    MPI_Type_free(&pair);
    MPI_Datatype again;
    MPI_Type_contiguous(2, MPI_UNSIGNED, &again);
    MPI_Type_commit(&again);
    MPI_Op opAgain;
    MPI_Op_create(opIntSum, 1, &opAgain);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Type_free(&again);
    MPI_Op_free(&opAgain);
    int ok = 1;
    for (long i = 0; i < n; ++i) {
      unsigned want[2];
      affineValue(i, want);
      ok = ok && u[2 * i] == want[0] && u[2 * i + 1] == want[1];
    }
    snprintf(name, sizeof name, "both-freed noncommutative in-place count %ld", n);
    good &= report(name, ok, u, sizeof(unsigned) * 2 * (size_t)n);
  }

  /* 4. Blocking calls on the same buffers and count, their operation and
   *    datatype freed and made again between rounds: pairs of ints, then
   *    triples, then pairs (the new handles may have the old values); a
   *    runtime that keeps a call's execution for the next same call must
   *    not serve a triple with a pair's. Each round calls twice. */
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
    const long n = counts[c] < maxN ? counts[c] : maxN / 2;
    int ok = 1;
    for (int round = 0; round < 4; ++round) {
      const int ints = round % 2 ? 3 : 2;
      MPI_Op op;
      MPI_Op_create(opIntSum, 1, &op);
      MPI_Datatype tuple;
      MPI_Type_contiguous(ints, MPI_INT, &tuple);
      MPI_Type_commit(&tuple);
      for (int twice = 0; twice < 2; ++twice) {
        for (long i = 0; i < n * ints; ++i)
          in[i] = (int)value(rank, i / ints, (int)(i % ints)), out[i] = -1;
        MPI_Allreduce(in, out, (int)n, tuple, op, MPI_COMM_WORLD);
        for (long i = 0; i < n * ints; ++i)
          ok = ok && (unsigned)out[i] == sumValue(i / ints, (int)(i % ints));
      }
      MPI_Type_free(&tuple);
      MPI_Op_free(&op);
    }
    snprintf(name, sizeof name, "remade handles blocking count %ld", n);
    good &= report(name, ok, out, sizeof(int) * 2 * (size_t)n);
  }

  free(in);
  free(out);
  if (rank == 0)
    printf("lifetimes: %s\n", good ? "ok" : "WRONG");
  MPI_Finalize();
  return !good;
}
