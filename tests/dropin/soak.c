/* tests/dropin/soak.c [SECONDS [SEED]]: a long mixed run that checks every
 * result. Each iteration makes a communicator (a duplicate of
 * MPI_COMM_WORLD, an odd/even split or a reversed one), runs every
 * collective the drop-in serves on it — allreduce with MPI_SUM and with a
 * non-commutative user operation, reduce and bcast at a random root,
 * allgather, reduce_scatter_block, reduce_scatter with uneven counts, scan,
 * exscan — each in a random form (blocking, non-blocking, persistent) at a
 * random size from 0 to 256 Ki ints, and frees the communicator; every
 * fourth iteration two threads also run allreduces on communicators of
 * their own. Every rank checks every result against a sequential model.
 *
 * The run is split in ten windows of equal time; rank 0 prints, per window,
 * the iterations, the time per iteration and the largest resident memory
 * of any rank, then "soak: ok" or how many results were wrong — so that a
 * reader sees whether memory stays flat and the time per call drifts.
 * Plain MPI (MPI_THREAD_MULTIPLE). */
#include <mpi.h>
#if defined(OPEN_MPI) && MPI_VERSION < 4
#include <mpi-ext.h>
#define PINIT(name) MPIX_##name##_init
#else
#define PINIT(name) MPI_##name##_init
#endif

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { Windows = 10, MaxN = 1 << 18 };
enum { Blocking, NonBlocking, Persistent };

static int rank, size, wrong;
static uint64_t rng;

/* The same sequence on every rank (all draw alike). */
static unsigned draw(unsigned n) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned)(rng >> 33) % n;
}

static int value(int r, int i) { return (r * 7919 + i * 31) % 1000 - 500; }

/* Pairs (a, b): x -> a x + b modulo 2^32, composed (in after inout):
 * associative, not commutative. */
static void affine(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  const unsigned *x = in;
  unsigned *y = inout;
  for (int i = 0; i < *len; ++i, x += 2, y += 2) {
    const unsigned a = x[0] * y[0], b = x[0] * y[1] + x[1];
    y[0] = a, y[1] = b;
  }
}

static MPI_Op affineOp;
static MPI_Datatype pairType;

/* Completes `req` made in `form`; a persistent one is started first and freed after. */
static void complete(int form, MPI_Request *req, int rc) {
  if (rc == MPI_SUCCESS && form == Persistent)
    rc = MPI_Start(req);
  if (rc == MPI_SUCCESS && form != Blocking)
    rc = MPI_Wait(req, MPI_STATUS_IGNORE);
  if (rc == MPI_SUCCESS && form == Persistent)
    rc = MPI_Request_free(req);
  wrong += rc != MPI_SUCCESS;
}

/* sum_{r in [lo, hi)} value(r, i) */
static int sumOf(int lo, int hi, int i) {
  int s = 0;
  for (int r = lo; r < hi; ++r)
    s += value(r, i);
  return s;
}

static void reductions(MPI_Comm c, int n, int *in, int *out, int *counts) {
  int me, p;
  MPI_Comm_rank(c, &me);
  MPI_Comm_size(c, &p);
  /* World ranks of c's members, to model results. */
  int *world = malloc(sizeof(int) * (size_t)p);
  MPI_Allgather(&rank, 1, MPI_INT, world, 1, MPI_INT, c);
  MPI_Request req = MPI_REQUEST_NULL;
  int form, rc;

  for (int i = 0; i < n; ++i)
    in[i] = value(rank, i);
  form = (int)draw(3);
  rc = form == Blocking      ? MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, c)
       : form == NonBlocking ? MPI_Iallreduce(in, out, n, MPI_INT, MPI_SUM, c, &req)
                             : PINIT(Allreduce)(in, out, n, MPI_INT, MPI_SUM, c, MPI_INFO_NULL,
                                                &req);
  complete(form, &req, rc);
  for (int i = 0; i < n; ++i) {
    int s = 0;
    for (int r = 0; r < p; ++r)
      s += value(world[r], i);
    wrong += out[i] != s;
  }

  /* The user operation on pairs: rank r contributes (r + 2, r); the
   * composition in rank order. */
  const int pairs = n / 2;
  unsigned *pin = (unsigned *)in, *pout = (unsigned *)out;
  for (int i = 0; i < pairs; ++i)
    pin[2 * i] = (unsigned)(world[me] + 2 + i), pin[2 * i + 1] = (unsigned)world[me];
  form = (int)draw(2); /* blocking or non-blocking */
  rc = form == Blocking ? MPI_Allreduce(pin, pout, pairs, pairType, affineOp, c)
                        : MPI_Iallreduce(pin, pout, pairs, pairType, affineOp, c, &req);
  complete(form, &req, rc);
  for (int i = 0; i < pairs; ++i) {
    unsigned a = 1, b = 0; /* x0 op x1 op ... : x0 ∘ x1 ∘ ..., the last rank's applied first */
    for (int r = 0; r < p; ++r) {
      const unsigned x = (unsigned)(world[r] + 2 + i), y = (unsigned)world[r];
      const unsigned na = a * x, nb = a * y + b;
      a = na, b = nb;
    }
    wrong += pout[2 * i] != a || pout[2 * i + 1] != b;
  }

  const int root = (int)draw((unsigned)p);
  for (int i = 0; i < n; ++i)
    in[i] = value(rank, i), out[i] = -7;
  form = (int)draw(3);
  rc = form == Blocking ? MPI_Reduce(in, out, n, MPI_INT, MPI_SUM, root, c)
       : form == NonBlocking
           ? MPI_Ireduce(in, out, n, MPI_INT, MPI_SUM, root, c, &req)
           : PINIT(Reduce)(in, out, n, MPI_INT, MPI_SUM, root, c, MPI_INFO_NULL, &req);
  complete(form, &req, rc);
  for (int i = 0; me == root && i < n; ++i) {
    int s = 0;
    for (int r = 0; r < p; ++r)
      s += value(world[r], i);
    wrong += out[i] != s;
  }

  for (int i = 0; i < n; ++i)
    out[i] = me == root ? value(world[root], i) : -7;
  form = (int)draw(3);
  rc = form == Blocking      ? MPI_Bcast(out, n, MPI_INT, root, c)
       : form == NonBlocking ? MPI_Ibcast(out, n, MPI_INT, root, c, &req)
                             : PINIT(Bcast)(out, n, MPI_INT, root, c, MPI_INFO_NULL, &req);
  complete(form, &req, rc);
  for (int i = 0; i < n; ++i)
    wrong += out[i] != value(world[root], i);

  const int b = n / p;
  for (int i = 0; i < b; ++i)
    in[i] = value(rank, i);
  form = (int)draw(3);
  rc = form == Blocking ? MPI_Allgather(in, b, MPI_INT, out, b, MPI_INT, c)
       : form == NonBlocking
           ? MPI_Iallgather(in, b, MPI_INT, out, b, MPI_INT, c, &req)
           : PINIT(Allgather)(in, b, MPI_INT, out, b, MPI_INT, c, MPI_INFO_NULL, &req);
  complete(form, &req, rc);
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < b; ++i)
      wrong += out[r * b + i] != value(world[r], i);

  for (int i = 0; i < b * p; ++i)
    in[i] = value(rank, i);
  form = (int)draw(3);
  rc = form == Blocking ? MPI_Reduce_scatter_block(in, out, b, MPI_INT, MPI_SUM, c)
       : form == NonBlocking
           ? MPI_Ireduce_scatter_block(in, out, b, MPI_INT, MPI_SUM, c, &req)
           : PINIT(Reduce_scatter_block)(in, out, b, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &req);
  complete(form, &req, rc);
  for (int i = 0; i < b; ++i) {
    int s = 0;
    for (int r = 0; r < p; ++r)
      s += value(world[r], me * b + i);
    wrong += out[i] != s;
  }

  /* Uneven counts, zeros included, summing to at most n. */
  int total = 0, start = 0;
  for (int r = 0; r < p; ++r) {
    counts[r] = (r % 3 == 1) ? 0 : (int)draw((unsigned)(n / p + 1));
    total += counts[r];
  }
  for (int r = 0; r < me; ++r)
    start += counts[r];
  for (int i = 0; i < total; ++i)
    in[i] = value(rank, i);
  form = (int)draw(2);
  rc = form == Blocking ? MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, c)
                        : MPI_Ireduce_scatter(in, out, counts, MPI_INT, MPI_SUM, c, &req);
  complete(form, &req, rc);
  for (int i = 0; i < counts[me]; ++i) {
    int s = 0;
    for (int r = 0; r < p; ++r)
      s += value(world[r], start + i);
    wrong += out[i] != s;
  }

  for (int i = 0; i < n; ++i)
    in[i] = value(rank, i), out[i] = -7;
  form = (int)draw(3);
  const int exclusive = (int)draw(2);
  if (exclusive)
    rc = form == Blocking ? MPI_Exscan(in, out, n, MPI_INT, MPI_SUM, c)
         : form == NonBlocking
             ? MPI_Iexscan(in, out, n, MPI_INT, MPI_SUM, c, &req)
             : PINIT(Exscan)(in, out, n, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &req);
  else
    rc = form == Blocking      ? MPI_Scan(in, out, n, MPI_INT, MPI_SUM, c)
         : form == NonBlocking ? MPI_Iscan(in, out, n, MPI_INT, MPI_SUM, c, &req)
                               : PINIT(Scan)(in, out, n, MPI_INT, MPI_SUM, c, MPI_INFO_NULL,
                                             &req);
  complete(form, &req, rc);
  for (int i = 0; i < n && !(exclusive && me == 0); ++i) {
    int s = 0;
    for (int r = 0; r < (exclusive ? me : me + 1); ++r)
      s += value(world[r], i);
    wrong += out[i] != s;
  }
  free(world);
}

/* A thread's allreduces on a communicator of its own. */
struct Job {
  MPI_Comm comm;
  int n, bad;
};

static void *threadMain(void *arg) {
  struct Job *j = arg;
  int *in = malloc(sizeof(int) * (size_t)(j->n + 1)), *out = malloc(sizeof(int) * (size_t)(j->n + 1));
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < j->n; ++i)
      in[i] = value(rank, i) + k;
    j->bad += MPI_Allreduce(in, out, j->n, MPI_INT, MPI_SUM, j->comm) != MPI_SUCCESS;
    for (int i = 0; i < j->n; ++i)
      j->bad += out[i] != sumOf(0, size, i) + k * size;
  }
  free(in);
  free(out);
  return NULL;
}

static long residentKiB(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
      resident = 0;
    fclose(f);
  }
  return resident * 4;
}

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double seconds = argc > 1 ? atof(argv[1]) : 10;
  rng = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
  MPI_Op_create(affine, 0, &affineOp);
  MPI_Type_contiguous(2, MPI_UNSIGNED, &pairType);
  MPI_Type_commit(&pairType);
  static const int sizes[] = {0, 1, 7, 100, 1000, 4099, 33333, MaxN / 2, MaxN};
  int *in = malloc(sizeof(int) * (MaxN + 8)), *out = malloc(sizeof(int) * (MaxN + 8));
  int *counts = malloc(sizeof(int) * (size_t)size);
  long iters[Windows] = {0}, rss[Windows] = {0};
  double spent[Windows] = {0};
  const double t0 = MPI_Wtime();
  int window = 0;
  for (long it = 0;; ++it) {
    /* Rank 0's clock decides, for everyone. */
    int go = window;
    if (rank == 0) {
      const double t = MPI_Wtime() - t0;
      go = t >= seconds ? Windows : (int)(t / seconds * Windows);
    }
    MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (go >= Windows)
      break;
    window = go;
    const double start = MPI_Wtime();
    MPI_Comm c;
    const unsigned how = draw(3);
    if (how == 0)
      MPI_Comm_dup(MPI_COMM_WORLD, &c);
    else if (how == 1)
      MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c);
    else
      MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &c);
    const int n = sizes[draw(sizeof sizes / sizeof sizes[0])];
    reductions(c, n, in, out, counts);
    if (it % 4 == 3 && provided == MPI_THREAD_MULTIPLE) {
      struct Job jobs[2];
      pthread_t th[2];
      for (int t = 0; t < 2; ++t) {
        jobs[t].n = sizes[draw(6)];
        jobs[t].bad = 0;
        MPI_Comm_dup(MPI_COMM_WORLD, &jobs[t].comm);
      }
      for (int t = 0; t < 2; ++t)
        pthread_create(&th[t], NULL, threadMain, &jobs[t]);
      for (int t = 0; t < 2; ++t) {
        pthread_join(th[t], NULL);
        wrong += jobs[t].bad;
        MPI_Comm_free(&jobs[t].comm);
      }
    }
    MPI_Comm_free(&c);
    spent[window] += MPI_Wtime() - start;
    ++iters[window];
    rss[window] = residentKiB();
  }
  long maxRss[Windows];
  MPI_Reduce(rss, maxRss, Windows, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  int all = 0;
  MPI_Allreduce(&wrong, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("window  iterations  ms/iteration  max RSS (MiB)\n");
    for (int w = 0; w < Windows; ++w)
      printf("%6d  %10ld  %12.2f  %13.1f\n", w, iters[w],
             iters[w] ? spent[w] / (double)iters[w] * 1e3 : 0.0, (double)maxRss[w] / 1024);
    if (all)
      printf("soak: %d wrong\n", all);
    else
      printf("soak: ok\n");
  }
  free(in);
  free(out);
  free(counts);
  MPI_Type_free(&pairType);
  MPI_Op_free(&affineOp);
  MPI_Finalize();
  return all != 0;
}
