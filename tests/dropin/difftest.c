/* tests/dropin/difftest.c: random MPI reduction programs for differential
 * testing of the drop-in (scripts/difftest; docs/testing.md).
 *
 *   difftest [--seed S] [--cases N] [--max-count C] [--verbose]
 *
 * A plain MPI program. From the seed, every rank draws the same sequence of
 * cases; a case is one collective (MPI_Allreduce, MPI_Reduce, MPI_Scan,
 * MPI_Exscan, MPI_Reduce_scatter_block, or one that moves blocks and combines
 * nothing: MPI_Alltoall, MPI_Gather, MPI_Scatter), a count (0 to C elements, 70000 by
 * default), a (datatype, operation) pair — built-in operations on built-in
 * types, MINLOC/MAXLOC on pair types, and user operations: commutative or
 * not, on built-in or derived types, some whose bits depend on the order of
 * their operands —, a root, a communicator (the world, a duplicate, or a split
 * of it in another rank order, some ranks left out), MPI_IN_PLACE or not, and
 * blocking or non-blocking (up to three calls in flight, completed by
 * MPI_Waitall or by polling MPI_Test; user operations and derived types are
 * sometimes freed while their calls are pending). Inputs are drawn per rank
 * from the seed too.
 *
 * Rank 0 prints one line per case: what it was, then
 *  - for a case whose result cannot depend on the order in which the
 *    implementation combines operands (integers, min/max, logical and
 *    bitwise operations, floating-point inputs chosen so that every partial
 *    sum is exact, associative user operations evaluated in rank order), a
 *    digest of every rank's result bits;
 *  - for the others, "ranks agree" when every rank of an allreduce got the
 *    same bits (and "-" for the other collectives, whose results may differ).
 * Run natively and under the drop-in, the outputs must be identical. (Sums of
 * 8- and 16-bit integers stay in range: Open MPI 4.1's op/avx saturates them
 * where MPI wraps, runtime/kernels/README.md.) Within
 * one run, ranks of an allreduce that get different bits print "RANKS
 * DIFFER", and the program exits 1.
 */
#include <mpi.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- random numbers ---------------------------------------------------------- */

static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* A stream of numbers for one purpose: (seed, case, what, rank). */
typedef struct {
  uint64_t state;
} Rng;

static Rng rngFor(uint64_t seed, uint64_t caseNo, uint64_t what, uint64_t rank) {
  Rng r = {mix(mix(mix(seed) ^ caseNo) ^ (what << 32 | rank))};
  return r;
}

static uint64_t next(Rng *r) { return r->state = mix(r->state); }
static int below(Rng *r, int n) { return (int)(next(r) % (uint64_t)n); }

static uint64_t fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = (const unsigned char *)data;
  for (size_t i = 0; i < n; ++i)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

/* --- user operations ------------------------------------------------------------ */

/* inout = in + inout on int32 (commutative). */
static void opIntSum(void *in, void *inout, int *len, MPI_Datatype *t) {
  (void)t;
  const int32_t *a = in;
  int32_t *b = inout;
  for (int i = 0; i < *len; ++i)
    b[i] = (int32_t)((uint32_t)a[i] + (uint32_t)b[i]);
}

/* Affine maps x -> m*x + c mod 2^64 as (m, c) pairs, composed in rank order:
 * associative, not commutative, exact. */
static void opAffine(void *in, void *inout, int *len, MPI_Datatype *t) {
  (void)t;
  const uint64_t *a = in;
  uint64_t *b = inout;
  for (int i = 0; i < *len; ++i, a += 2, b += 2) {
    const uint64_t m = a[0] * b[0], c = a[1] * b[0] + b[1];
    b[0] = m, b[1] = c;
  }
}

/* 2x2 matrix product mod 2^32 on four uint32: associative, not commutative. */
static void opMatmul(void *in, void *inout, int *len, MPI_Datatype *t) {
  (void)t;
  const uint32_t *a = in;
  uint32_t *b = inout;
  for (int i = 0; i < *len; ++i, a += 4, b += 4) {
    const uint32_t c0 = a[0] * b[0] + a[1] * b[2], c1 = a[0] * b[1] + a[1] * b[3];
    const uint32_t c2 = a[2] * b[0] + a[3] * b[2], c3 = a[2] * b[1] + a[3] * b[3];
    b[0] = c0, b[1] = c1, b[2] = c2, b[3] = c3;
  }
}

/* a o b = a on uint64, declared commutative: the bits say which came first. */
static void opFirst(void *in, void *inout, int *len, MPI_Datatype *t) {
  (void)t;
  memcpy(inout, in, sizeof(uint64_t) * (size_t)*len);
}

/* Merging (n, mean, M2) triples of doubles, declared commutative: commutative
 * in exact arithmetic only. */
static void opWelford(void *in, void *inout, int *len, MPI_Datatype *t) {
  (void)t;
  const double *a = in;
  double *b = inout;
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

/* Double addition declared non-commutative: rank order is kept, but the
 * association may differ between implementations. */
static void opDoubleSum(void *in, void *inout, int *len, MPI_Datatype *t) {
  (void)t;
  const double *a = in;
  double *b = inout;
  for (int i = 0; i < *len; ++i)
    b[i] = a[i] + b[i];
}

/* --- what a case combines ---------------------------------------------------------- */

typedef enum { Exact, OrderDependent } Exactness;
typedef enum { FillInt, FillSmallInt, FillTiny, FillBool, FillFloatExact, FillDoubleExact, FillDoublePow2,
               FillDoubleAny, FillPairInt, FillPairDouble, FillAffine, FillMatmul, FillU64,
               FillWelford } Fill;
typedef enum { UserNone, UserIntSum, UserAffine, UserMatmul, UserFirst, UserWelford,
               UserDoubleSum } User;

typedef struct {
  const char *name;
  MPI_Datatype base; /* the element type, or the type a derived one is made of */
  int blocks;        /* > 0: MPI_Type_contiguous(blocks, base) */
  MPI_Op op;         /* a built-in operation, or MPI_OP_NULL for `user` */
  User user;
  int commute;
  Fill fill;
  size_t elemBytes; /* extent of one element */
  Exactness exact;
} Kind;

#define BUILTIN(name, type, op, fill, bytes, exact) {name, type, 0, op, UserNone, 1, fill, bytes, exact}
static const Kind kinds[] = {
    BUILTIN("int32 sum", MPI_INT32_T, MPI_SUM, FillInt, 4, Exact),
    BUILTIN("int32 prod", MPI_INT32_T, MPI_PROD, FillInt, 4, Exact),
    BUILTIN("int32 min", MPI_INT32_T, MPI_MIN, FillSmallInt, 4, Exact),
    BUILTIN("int32 max", MPI_INT32_T, MPI_MAX, FillInt, 4, Exact),
    BUILTIN("int32 band", MPI_INT32_T, MPI_BAND, FillInt, 4, Exact),
    BUILTIN("int32 bor", MPI_INT32_T, MPI_BOR, FillInt, 4, Exact),
    BUILTIN("int32 bxor", MPI_INT32_T, MPI_BXOR, FillInt, 4, Exact),
    BUILTIN("int32 land", MPI_INT32_T, MPI_LAND, FillSmallInt, 4, Exact),
    BUILTIN("int32 lor", MPI_INT32_T, MPI_LOR, FillSmallInt, 4, Exact),
    BUILTIN("int32 lxor", MPI_INT32_T, MPI_LXOR, FillSmallInt, 4, Exact),
    BUILTIN("uint8 sum", MPI_UINT8_T, MPI_SUM, FillTiny, 1, Exact),
    BUILTIN("uint8 bxor", MPI_UINT8_T, MPI_BXOR, FillInt, 1, Exact),
    BUILTIN("int16 sum", MPI_INT16_T, MPI_SUM, FillTiny, 2, Exact),
    BUILTIN("int16 max", MPI_INT16_T, MPI_MAX, FillSmallInt, 2, Exact),
    BUILTIN("int64 sum", MPI_INT64_T, MPI_SUM, FillInt, 8, Exact),
    BUILTIN("int64 min", MPI_INT64_T, MPI_MIN, FillInt, 8, Exact),
    BUILTIN("uint64 prod", MPI_UINT64_T, MPI_PROD, FillInt, 8, Exact),
    BUILTIN("uint64 bor", MPI_UINT64_T, MPI_BOR, FillInt, 8, Exact),
    BUILTIN("long sum", MPI_LONG, MPI_SUM, FillInt, sizeof(long), Exact),
    BUILTIN("unsigned max", MPI_UNSIGNED, MPI_MAX, FillInt, 4, Exact),
    BUILTIN("bool land", MPI_C_BOOL, MPI_LAND, FillBool, sizeof(_Bool), Exact),
    BUILTIN("bool lor", MPI_C_BOOL, MPI_LOR, FillBool, sizeof(_Bool), Exact),
    BUILTIN("float sum exact", MPI_FLOAT, MPI_SUM, FillFloatExact, 4, Exact),
    BUILTIN("float min", MPI_FLOAT, MPI_MIN, FillFloatExact, 4, Exact),
    BUILTIN("double sum exact", MPI_DOUBLE, MPI_SUM, FillDoubleExact, 8, Exact),
    BUILTIN("double prod exact", MPI_DOUBLE, MPI_PROD, FillDoublePow2, 8, Exact),
    BUILTIN("double max", MPI_DOUBLE, MPI_MAX, FillDoubleAny, 8, Exact),
    BUILTIN("double sum", MPI_DOUBLE, MPI_SUM, FillDoubleAny, 8, OrderDependent),
    BUILTIN("2int minloc", MPI_2INT, MPI_MINLOC, FillPairInt, 8, Exact),
    BUILTIN("2int maxloc", MPI_2INT, MPI_MAXLOC, FillPairInt, 8, Exact),
    BUILTIN("double_int maxloc", MPI_DOUBLE_INT, MPI_MAXLOC, FillPairDouble,
            sizeof(struct { double d; int i; }), Exact),
    {"user int32 sum (commutative)", MPI_INT32_T, 0, MPI_OP_NULL, UserIntSum, 1, FillInt, 4, Exact},
    {"user affine on contiguous(2, uint64) (non-commutative)", MPI_UINT64_T, 2, MPI_OP_NULL,
     UserAffine, 0, FillAffine, 16, Exact},
    {"user matmul on contiguous(4, uint32) (non-commutative)", MPI_UINT32_T, 4, MPI_OP_NULL,
     UserMatmul, 0, FillMatmul, 16, Exact},
    {"user first on uint64 (declared commutative)", MPI_UINT64_T, 0, MPI_OP_NULL, UserFirst, 1,
     FillU64, 8, OrderDependent},
    {"user welford on contiguous(3, double) (declared commutative)", MPI_DOUBLE, 3, MPI_OP_NULL,
     UserWelford, 1, FillWelford, 24, OrderDependent},
    {"user double sum (non-commutative)", MPI_DOUBLE, 0, MPI_OP_NULL, UserDoubleSum, 0,
     FillDoubleAny, 8, OrderDependent},
};
enum { numKinds = sizeof kinds / sizeof kinds[0] };

static MPI_User_function *userFunction(User u) {
  switch (u) {
  case UserIntSum: return opIntSum;
  case UserAffine: return opAffine;
  case UserMatmul: return opMatmul;
  case UserFirst: return opFirst;
  case UserWelford: return opWelford;
  case UserDoubleSum: return opDoubleSum;
  case UserNone: break;
  }
  return NULL;
}

/* Element i of rank `rank`'s input. Values are small where sums or products
 * must stay exact at up to 64 ranks. */
static void fillOne(Fill f, char *p, Rng *r) {
  switch (f) {
  case FillInt: { /* the element's bytes are the first 1 to 8 of these */
    uint64_t v = next(r);
    memcpy(p, &v, 8);
    break;
  }
  case FillSmallInt: {
    int64_t v = below(r, 5) - 1;
    memcpy(p, &v, 8);
    break;
  }
  case FillTiny: *(uint64_t *)p = (uint64_t)below(r, 4); break;
  case FillBool: *(_Bool *)p = below(r, 4) != 0; break;
  case FillFloatExact: *(float *)p = (float)(below(r, 129) - 64) * 0.25f; break;
  case FillDoubleExact: *(double *)p = (double)(below(r, 1 << 20) - (1 << 19)) / 1024.0; break;
  case FillDoublePow2: *(double *)p = (below(r, 2) ? -1.0 : 1.0) * (double)(1 << below(r, 4)); break;
  case FillDoubleAny: *(double *)p = ((double)(int64_t)next(r)) / 3.0e15; break;
  case FillPairInt: {
    int v[2] = {below(r, 4), below(r, 1000)};
    memcpy(p, v, sizeof v);
    break;
  }
  case FillPairDouble: {
    struct { double d; int i; } v;
    memset(&v, 0, sizeof v);
    v.d = below(r, 3) * 0.5, v.i = below(r, 1000);
    memcpy(p, &v, sizeof v);
    break;
  }
  case FillAffine: {
    uint64_t v[2] = {next(r) | 1, next(r)};
    memcpy(p, v, sizeof v);
    break;
  }
  case FillMatmul: {
    uint32_t v[4] = {(uint32_t)next(r), (uint32_t)next(r), (uint32_t)next(r), (uint32_t)next(r)};
    memcpy(p, v, sizeof v);
    break;
  }
  case FillU64: {
    uint64_t v = next(r);
    memcpy(p, &v, 8);
    break;
  }
  case FillWelford: {
    double v[3] = {1 + below(r, 3), ((double)(int64_t)next(r)) / 1e18, below(r, 100) / 7.0};
    memcpy(p, v, sizeof v);
    break;
  }
  }
}

static void fill(const Kind *k, char *buf, long count, Rng *r) {
  memset(buf, 0, (size_t)count * k->elemBytes);
  char tmp[32];
  for (long i = 0; i < count; ++i) {
    memset(tmp, 0, sizeof tmp);
    fillOne(k->fill, tmp, r);
    memcpy(buf + (size_t)i * k->elemBytes, tmp, k->elemBytes);
  }
}

/* The padding inside an MPI_DOUBLE_INT element (bytes 12..15) is not data:
 * the drop-in moves whole elements, so it may carry other bytes there than
 * native MPI leaves (docs/dropin.md); only the value and index are compared. */
static void clearPadding(const Kind *k, char *buf, long count) {
  typedef struct { double d; int i; } Pair;
  const size_t used = offsetof(Pair, i) + sizeof(int);
  if (k->fill != FillPairDouble || used >= k->elemBytes)
    return;
  for (long e = 0; e < count; ++e)
    memset(buf + (size_t)e * k->elemBytes + used, 0, k->elemBytes - used);
}

/* --- cases -------------------------------------------------------------------------- */

typedef enum { Allreduce, Reduce, Scan, Exscan, ReduceScatterBlock, Alltoall, Gather, Scatter } Coll;
static const char *const collNames[] = {"allreduce", "reduce", "scan",     "exscan",
                                        "reduce_scatter_block", "alltoall", "gather", "scatter"};
/* The collective moves blocks: no operation, every result exact. */
static int movesBlocks(Coll c) { return c == Alltoall || c == Gather || c == Scatter; }
static int rooted(Coll c) { return c == Reduce || c == Gather || c == Scatter; }

static int worldRank, worldSize, failures, verbose;
static long maxCount = 70000;

typedef struct {
  Coll coll;
  const Kind *kind;
  long count; /* elements per rank (reduce_scatter_block and the block movers: per block) */
  int root;   /* comm rank, for reduce, gather and scatter */
  int commForm;
  int inPlace;
  int inFlight;    /* 0: blocking; else non-blocking calls in flight */
  int poll;        /* complete by polling MPI_Test */
  int freeEarly;   /* free the user op / derived type before completing */
  int vForm;       /* a block mover as MPI_Alltoallv, MPI_Gatherv or MPI_Scatterv */
} Case;

static const char *const commNames[] = {"world", "dup", "split halves", "split parity reversed",
                                        "split without the last rank"};

static long drawCount(Rng *r) {
  const int d = below(r, 100);
  long n;
  if (d < 5)
    n = 0;
  else if (d < 35)
    n = 1 + below(r, 8);
  else if (d < 70)
    n = 9 + below(r, 192);
  else if (d < 95)
    n = 201 + below(r, 4800);
  else
    n = 5001 + below(r, 65000);
  return n < maxCount ? n : maxCount;
}

static Case drawCase(uint64_t seed, int caseNo) {
  Rng r = rngFor(seed, (uint64_t)caseNo, 0, 0);
  Case c;
  memset(&c, 0, sizeof c);
  const int d = below(&r, 100);
  c.coll = d < 40   ? Allreduce
           : d < 65 ? Reduce
           : d < 75 ? Scan
           : d < 82 ? Exscan
           : d < 88 ? ReduceScatterBlock
           : d < 92 ? Alltoall
           : d < 96 ? Gather
                    : Scatter;
  c.kind = &kinds[below(&r, numKinds)];
  c.count = drawCount(&r);
  if ((c.coll == ReduceScatterBlock || movesBlocks(c.coll)) && c.count > 4000)
    c.count /= 16;
  c.commForm = below(&r, 10) < 5 ? 0 : 1 + below(&r, 4);
  c.root = below(&r, 1 << 20); /* reduced modulo the communicator's size */
  c.inPlace = below(&r, 10) < 3 && c.coll != Scatter; /* (its root's recvbuf) */
  c.inFlight = below(&r, 2) ? 0 : 1 + below(&r, 3);
  c.poll = c.inFlight && below(&r, 3) == 0;
  c.freeEarly = c.inFlight && below(&r, 2);
  c.vForm = movesBlocks(c.coll) && below(&r, 2); /* (drawn last: the other draws stay) */
  return c;
}

/* The communicator of a case, MPI_COMM_NULL on ranks it leaves out. */
static MPI_Comm makeComm(int form) {
  MPI_Comm c = MPI_COMM_NULL;
  switch (form) {
  case 0: return MPI_COMM_WORLD;
  case 1: MPI_Comm_dup(MPI_COMM_WORLD, &c); break;
  case 2: MPI_Comm_split(MPI_COMM_WORLD, worldRank < (worldSize + 1) / 2, worldRank, &c); break;
  case 3: MPI_Comm_split(MPI_COMM_WORLD, worldRank % 2, worldSize - worldRank, &c); break;
  default:
    MPI_Comm_split(MPI_COMM_WORLD, worldRank == worldSize - 1 && worldSize > 1 ? MPI_UNDEFINED : 0,
                   worldRank, &c);
  }
  return c;
}

/* A v-variant's elements from rank i to rank j: a symmetric split of up to
 * `count`, zeros included; each block at j * count (gaps after short ones). */
static int vCount(long count, int i, int j) { return (int)(count * ((i + j) % 3) / 2); }

/* The v-variant of a block mover, with counts and displacements from
 * vCount (v: 4 arrays of `size` ints, kept until the call completes). */
static int callV(const Case *c, MPI_Comm comm, const void *send, void *recv, long count,
                 MPI_Datatype type, int root, int *v, MPI_Request *req) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int *sc = v, *sd = v + size, *rc = v + 2 * size, *rd = v + 3 * size;
  for (int j = 0; j < size; ++j) {
    sc[j] = vCount(count, c->coll == Scatter ? root : rank, j);
    rc[j] = vCount(count, j, c->coll == Gather ? root : rank);
    sd[j] = rd[j] = (int)(j * count);
  }
  const int own = c->coll == Gather ? vCount(count, rank, root) : vCount(count, root, rank);
  switch (c->coll) {
  case Alltoall:
    return c->inFlight ? MPI_Ialltoallv(send, sc, sd, type, recv, rc, rd, type, comm, req)
                       : MPI_Alltoallv(send, sc, sd, type, recv, rc, rd, type, comm);
  case Gather:
    return c->inFlight ? MPI_Igatherv(send, own, type, recv, rc, rd, type, root, comm, req)
                       : MPI_Gatherv(send, own, type, recv, rc, rd, type, root, comm);
  default:
    return c->inFlight ? MPI_Iscatterv(send, sc, sd, type, recv, own, type, root, comm, req)
                       : MPI_Scatterv(send, sc, sd, type, recv, own, type, root, comm);
  }
}

/* Posts (or runs) one call; *req is MPI_REQUEST_NULL for a blocking one. */
static int call(const Case *c, MPI_Comm comm, const void *send, void *recv, long count,
                MPI_Datatype type, MPI_Op op, int root, MPI_Request *req) {
  const int n = (int)count;
  *req = MPI_REQUEST_NULL;
  if (!c->inFlight) {
    switch (c->coll) {
    case Allreduce: return MPI_Allreduce(send, recv, n, type, op, comm);
    case Reduce: return MPI_Reduce(send, recv, n, type, op, root, comm);
    case Scan: return MPI_Scan(send, recv, n, type, op, comm);
    case Exscan: return MPI_Exscan(send, recv, n, type, op, comm);
    case ReduceScatterBlock: return MPI_Reduce_scatter_block(send, recv, n, type, op, comm);
    case Alltoall: return MPI_Alltoall(send, n, type, recv, n, type, comm);
    case Gather: return MPI_Gather(send, n, type, recv, n, type, root, comm);
    case Scatter: return MPI_Scatter(send, n, type, recv, n, type, root, comm);
    }
  }
  switch (c->coll) {
  case Allreduce: return MPI_Iallreduce(send, recv, n, type, op, comm, req);
  case Reduce: return MPI_Ireduce(send, recv, n, type, op, root, comm, req);
  case Scan: return MPI_Iscan(send, recv, n, type, op, comm, req);
  case Exscan: return MPI_Iexscan(send, recv, n, type, op, comm, req);
  case ReduceScatterBlock: return MPI_Ireduce_scatter_block(send, recv, n, type, op, comm, req);
  case Alltoall: return MPI_Ialltoall(send, n, type, recv, n, type, comm, req);
  case Gather: return MPI_Igather(send, n, type, recv, n, type, root, comm, req);
  case Scatter: return MPI_Iscatter(send, n, type, recv, n, type, root, comm, req);
  }
  return MPI_ERR_OTHER;
}

static void describe(const Case *c, int size, int root, char *out, size_t n) {
  char rootText[32] = "";
  if (rooted(c->coll))
    snprintf(rootText, sizeof rootText, " root %d", root);
  snprintf(out, n, "%s%s %s count %ld on %s (%d ranks)%s%s%s%s", collNames[c->coll],
           c->vForm ? "v" : "",
           c->kind->name, c->count, commNames[c->commForm], size, rootText,
           c->inPlace ? " in place" : "",
           c->inFlight == 0 ? "" : c->poll ? " non-blocking (tested)" : " non-blocking",
           c->freeEarly ? " freed early" : "");
  if (c->inFlight > 1)
    snprintf(out + strlen(out), n - strlen(out), " x%d", c->inFlight);
}

static void runCase(uint64_t seed, int caseNo) {
  const Case c = drawCase(seed, caseNo);
  const Kind *k = c.kind;
  MPI_Comm comm = makeComm(c.commForm);
  int rank = -1, size = 0;
  uint64_t digest = 0;
  int applicable = 0, agree = 1;
  char desc[256] = "";
  if (comm != MPI_COMM_NULL) {
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const int root = c.root % size;
    MPI_Datatype type = k->base;
    if (k->blocks) {
      MPI_Type_contiguous(k->blocks, k->base, &type);
      MPI_Type_commit(&type);
    }
    MPI_Op op = k->op;
    if (k->user != UserNone)
      MPI_Op_create(userFunction(k->user), k->commute, &op);

    /* Buffers: `in` holds the input (reduce_scatter_block, alltoall and
     * scatter: size blocks), `out` the result (alltoall and gather: size
     * blocks); in place, the input starts in `out` (gather: in the root's
     * block). */
    const int blocksIn = c.coll == ReduceScatterBlock || c.coll == Alltoall || c.coll == Scatter;
    const int blocksOut = c.coll == Alltoall || c.coll == Gather;
    const long inCount = blocksIn ? c.count * size : c.count;
    const long outCount = blocksOut ? c.count * size : c.count;
    const int calls = c.inFlight ? c.inFlight : 1;
    /* Each call's buffers start 64-byte aligned (and are never empty). */
    const size_t inBytes = ((size_t)inCount * k->elemBytes + 64) / 64 * 64;
    /* (reduce_scatter_block in place: its whole input starts in `out`.) */
    const long outRoom = c.coll == ReduceScatterBlock ? inCount : outCount;
    const size_t outBytes = ((size_t)outRoom * k->elemBytes + 64) / 64 * 64;
    char *in = malloc(inBytes * (size_t)calls), *out = malloc(outBytes * (size_t)calls);
    int *vArrays = malloc(sizeof(int) * 4 * (size_t)size * (size_t)calls);
    MPI_Request reqs[3];
    for (int j = 0; j < calls; ++j) {
      Rng r = rngFor(seed, (uint64_t)caseNo, 1 + (uint64_t)j, (uint64_t)rank);
      char *inJ = in + inBytes * (size_t)j, *outJ = out + outBytes * (size_t)j;
      fill(k, inJ, inCount, &r);
      memset(outJ, 0, outBytes);
      /* In place where the collective allows it (reduce and gather: the
       * root only). */
      const int inPlace = c.inPlace && ((c.coll != Reduce && c.coll != Gather) || rank == root);
      if (inPlace)
        memcpy(outJ + (c.coll == Gather ? (size_t)root * (size_t)c.count * k->elemBytes : 0),
               inJ, (size_t)inCount * k->elemBytes);
      reqs[j] = MPI_REQUEST_NULL;
      const int rc =
          c.vForm ? callV(&c, comm, inPlace ? MPI_IN_PLACE : inJ, outJ, c.count, type, root,
                          vArrays + 4 * size * j, &reqs[j])
                  : call(&c, comm, inPlace ? MPI_IN_PLACE : inJ, outJ, c.count, type, op, root,
                         &reqs[j]);
      if (rc != MPI_SUCCESS) {
        fprintf(stderr, "difftest: case %d: the call failed (%d)\n", caseNo, rc);
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
    }
    if (c.freeEarly) {
      if (k->user != UserNone)
        MPI_Op_free(&op);
      if (k->blocks)
        MPI_Type_free(&type);
    }
    if (c.inFlight && c.poll) {
      int done = 0;
      while (!done)
        MPI_Testall(calls, reqs, &done, MPI_STATUSES_IGNORE);
    } else if (c.inFlight) {
      MPI_Waitall(calls, reqs, MPI_STATUSES_IGNORE);
    }
    if (!c.freeEarly) {
      if (k->user != UserNone)
        MPI_Op_free(&op);
      if (k->blocks)
        MPI_Type_free(&type);
    }

    /* Which ranks have a defined result: all but the non-roots of reduce
     * and gather and rank 0 of exscan. */
    applicable = !((c.coll == Reduce || c.coll == Gather) && rank != root) &&
                 !(c.coll == Exscan && rank == 0);
    uint64_t h = 0xcbf29ce484222325ull;
    for (int j = 0; j < calls && applicable; ++j) {
      clearPadding(k, out + outBytes * (size_t)j, outCount);
      h = fnv(h, out + outBytes * (size_t)j, (size_t)outCount * k->elemBytes);
    }
    digest = applicable ? h : 0;
    if (c.coll == Allreduce) {
      uint64_t *all = malloc(sizeof(uint64_t) * (size_t)size);
      MPI_Allgather(&digest, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, comm);
      for (int q = 1; q < size; ++q)
        agree &= all[q] == all[0];
      free(all);
    }
    free(in);
    free(out);
    free(vArrays);
    describe(&c, size, root, desc, sizeof desc);
  }
  /* Rank 0 of the world collects every rank's digest and agreement. */
  uint64_t mine[2] = {digest, (uint64_t)agree};
  uint64_t *all = worldRank == 0 ? malloc(sizeof mine * (size_t)worldSize) : NULL;
  MPI_Gather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (comm != MPI_COMM_NULL && comm != MPI_COMM_WORLD)
    MPI_Comm_free(&comm);
  /* World rank 0 is in every case's communicator, so `desc` is set here. */
  if (worldRank != 0)
    return;
  int allAgree = 1;
  uint64_t h = 0xcbf29ce484222325ull;
  for (int q = 0; q < worldSize; ++q) {
    allAgree &= all[2 * q + 1] != 0;
    h = fnv(h, &all[2 * q], sizeof all[2 * q]);
  }
  free(all);
  if (c.coll == Allreduce && !allAgree) {
    ++failures;
    printf("case %d: %s: RANKS DIFFER\n", caseNo, desc);
  } else if (k->exact == Exact || movesBlocks(c.coll)) {
    printf("case %d: %s: %016llx\n", caseNo, desc, (unsigned long long)h);
  } else {
    printf("case %d: %s: %s\n", caseNo, desc, c.coll == Allreduce ? "ranks agree" : "-");
  }
  if (verbose)
    fflush(stdout);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  uint64_t seed = 1;
  int cases = 100;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--seed") && i + 1 < argc)
      seed = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--cases") && i + 1 < argc)
      cases = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--max-count") && i + 1 < argc)
      maxCount = atol(argv[++i]);
    else if (!strcmp(argv[i], "--verbose"))
      verbose = 1;
    else {
      if (worldRank == 0)
        fprintf(stderr, "usage: difftest [--seed S] [--cases N] [--max-count C] [--verbose]\n");
      MPI_Finalize();
      return 2;
    }
  }
  if (worldRank == 0)
    printf("difftest: seed %llu, %d cases, %d ranks\n", (unsigned long long)seed, cases,
           worldSize);
  for (int i = 0; i < cases; ++i)
    runCase(seed, i);
  int failed = failures;
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (worldRank == 0)
    printf("difftest: %s\n", failed ? "ranks differ" : "done");
  MPI_Finalize();
  return failed != 0;
}
