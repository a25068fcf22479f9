/* tests/dropin/faults.c: every collective the drop-in serves, in each form,
 * on communicators made for it — the program the fault-injection tests run
 * (COLLC_FAULT makes one rank fail alone where a plan is set up, built,
 * loaded or first bound; the ranks must agree and finish with native MPI's
 * results, never hang). Plain MPI: it checks its own results.
 *
 * Each form (non-blocking first, so that a plan's first use on a
 * communicator is a non-blocking call, then persistent, then blocking) runs
 * on a new duplicate of MPI_COMM_WORLD: allreduce, reduce, bcast, allgather,
 * reduce_scatter_block, scan and exscan, each twice with new input. Then
 * three non-blocking collectives in flight together, before and after a
 * barrier; two persistent requests started together three times; and the
 * non-blocking round on MPI_COMM_WORLD. Integer sums: exact. Rank 0 prints
 * "faults: ok". */
#include "selfcheck.h"

#include <stdlib.h>
#include <string.h>

#if defined(OPEN_MPI) && MPI_VERSION < 4
#define ALLREDUCE_INIT MPIX_Allreduce_init
#define RSB_INIT MPIX_Reduce_scatter_block_init
#define SCAN_INIT MPIX_Scan_init
#define STARTALL MPI_Startall
#else
#define ALLREDUCE_INIT MPI_Allreduce_init
#define RSB_INIT MPI_Reduce_scatter_block_init
#define SCAN_INIT MPI_Scan_init
#define STARTALL MPI_Startall
#endif

enum { N = 300, B = 23 };

static int val(int r, int i, int k) { return r * 131 + i % 17 + 7 * k; }

/* Sum over ranks lo..hi-1 of val(r, i, k). */
static int sum(int lo, int hi, int i, int k) {
  int s = 0;
  for (int r = lo; r < hi; ++r)
    s += val(r, i, k);
  return s;
}

static void finish(MPI_Request *req, int form, int rc, const char *what) {
  if (rc == MPI_SUCCESS && form != Blocking) {
    if (form == Persistent)
      rc = MPI_Start(req);
    if (rc == MPI_SUCCESS)
      rc = MPI_Wait(req, MPI_STATUS_IGNORE);
    if (form == Persistent && rc == MPI_SUCCESS)
      rc = MPI_Request_free(req);
  }
  char line[160];
  snprintf(line, sizeof line, "%s %s returned %d", what, formNames[form], rc);
  check(line, rc == MPI_SUCCESS);
}

/* Each collective once in `form` on `comm` with input generation k. */
static void round1(MPI_Comm comm, int form, int k) {
  int *in = malloc(sizeof(int) * N * (size_t)size);
  int *out = malloc(sizeof(int) * N * (size_t)size);
  MPI_Request req = MPI_REQUEST_NULL;
  char what[120];
  int rc, ok;

  for (int i = 0; i < N; ++i)
    in[i] = val(rank, i, k), out[i] = -1;
  rc = form == Blocking      ? MPI_Allreduce(in, out, N, MPI_INT, MPI_SUM, comm)
       : form == NonBlocking ? MPI_Iallreduce(in, out, N, MPI_INT, MPI_SUM, comm, &req)
                             : ALLREDUCE_INIT(in, out, N, MPI_INT, MPI_SUM, comm,
                                              MPI_INFO_NULL, &req);
  finish(&req, form, rc, "allreduce");
  ok = 1;
  for (int i = 0; i < N; ++i)
    ok = ok && out[i] == sum(0, size, i, k);
  snprintf(what, sizeof what, "allreduce %s k=%d", formNames[form], k);
  check(what, ok);

  const int root = size - 1;
  for (int i = 0; i < N; ++i)
    out[i] = -1;
  rc = form == Blocking ? MPI_Reduce(in, out, N, MPI_INT, MPI_SUM, root, comm)
       : form == NonBlocking
           ? MPI_Ireduce(in, out, N, MPI_INT, MPI_SUM, root, comm, &req)
           : REDUCE_INIT(in, out, N, MPI_INT, MPI_SUM, root, comm, MPI_INFO_NULL, &req);
  finish(&req, form, rc, "reduce");
  ok = 1;
  for (int i = 0; rank == root && i < N; ++i)
    ok = ok && out[i] == sum(0, size, i, k);
  snprintf(what, sizeof what, "reduce %s k=%d", formNames[form], k);
  check(what, ok);

  const int broot = 1 % size;
  for (int i = 0; i < N; ++i)
    out[i] = rank == broot ? val(broot, i, k) : -1;
  rc = form == Blocking      ? MPI_Bcast(out, N, MPI_INT, broot, comm)
       : form == NonBlocking ? MPI_Ibcast(out, N, MPI_INT, broot, comm, &req)
                             : BCAST_INIT(out, N, MPI_INT, broot, comm, MPI_INFO_NULL, &req);
  finish(&req, form, rc, "bcast");
  ok = 1;
  for (int i = 0; i < N; ++i)
    ok = ok && out[i] == val(broot, i, k);
  snprintf(what, sizeof what, "bcast %s k=%d", formNames[form], k);
  check(what, ok);

  for (int i = 0; i < B * size; ++i)
    out[i] = -1;
  rc = form == Blocking ? MPI_Allgather(in, B, MPI_INT, out, B, MPI_INT, comm)
       : form == NonBlocking
           ? MPI_Iallgather(in, B, MPI_INT, out, B, MPI_INT, comm, &req)
           : ALLGATHER_INIT(in, B, MPI_INT, out, B, MPI_INT, comm, MPI_INFO_NULL, &req);
  finish(&req, form, rc, "allgather");
  ok = 1;
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < B; ++i)
      ok = ok && out[r * B + i] == val(r, i, k);
  snprintf(what, sizeof what, "allgather %s k=%d", formNames[form], k);
  check(what, ok);

  for (int i = 0; i < B * size; ++i)
    in[i] = val(rank, i, k);
  for (int i = 0; i < B; ++i)
    out[i] = -1;
  rc = form == Blocking ? MPI_Reduce_scatter_block(in, out, B, MPI_INT, MPI_SUM, comm)
       : form == NonBlocking
           ? MPI_Ireduce_scatter_block(in, out, B, MPI_INT, MPI_SUM, comm, &req)
           : RSB_INIT(in, out, B, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req);
  finish(&req, form, rc, "reduce_scatter_block");
  ok = 1;
  for (int i = 0; i < B; ++i)
    ok = ok && out[i] == sum(0, size, rank * B + i, k);
  snprintf(what, sizeof what, "reduce_scatter_block %s k=%d", formNames[form], k);
  check(what, ok);

  for (int i = 0; i < N; ++i)
    out[i] = -1;
  rc = form == Blocking      ? MPI_Scan(in, out, N, MPI_INT, MPI_SUM, comm)
       : form == NonBlocking ? MPI_Iscan(in, out, N, MPI_INT, MPI_SUM, comm, &req)
                             : SCAN_INIT(in, out, N, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL,
                                         &req);
  finish(&req, form, rc, "scan");
  ok = 1;
  for (int i = 0; i < N; ++i)
    ok = ok && out[i] == sum(0, rank + 1, i, k);
  snprintf(what, sizeof what, "scan %s k=%d", formNames[form], k);
  check(what, ok);

  for (int i = 0; i < N; ++i)
    out[i] = -1;
  rc = form == Blocking ? MPI_Exscan(in, out, N, MPI_INT, MPI_SUM, comm)
       : form == NonBlocking
           ? MPI_Iexscan(in, out, N, MPI_INT, MPI_SUM, comm, &req)
           : EXSCAN_INIT(in, out, N, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req);
  finish(&req, form, rc, "exscan");
  ok = 1;
  for (int i = 0; rank > 0 && i < N; ++i)
    ok = ok && out[i] == sum(0, rank, i, k);
  snprintf(what, sizeof what, "exscan %s k=%d", formNames[form], k);
  check(what, ok);

  free(in);
  free(out);
}

static MPI_Comm fresh(void) {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  return c;
}

/* Three non-blocking collectives in flight at once on `comm`. */
static void together(MPI_Comm comm, int k) {
  int a[N], ra[N], b[N], g[B * 8 + B];
  int *gather = size <= 8 ? g : malloc(sizeof(int) * B * (size_t)size);
  MPI_Request reqs[3];
  for (int i = 0; i < N; ++i)
    a[i] = val(rank, i, k), b[i] = rank == 0 ? val(0, i, k) : -1;
  int rc = MPI_Iallreduce(a, ra, N, MPI_INT, MPI_SUM, comm, &reqs[0]);
  rc |= MPI_Ibcast(b, N, MPI_INT, 0, comm, &reqs[1]);
  rc |= MPI_Iallgather(a, B, MPI_INT, gather, B, MPI_INT, comm, &reqs[2]);
  rc |= MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE);
  int ok = rc == MPI_SUCCESS;
  for (int i = 0; i < N; ++i)
    ok = ok && ra[i] == sum(0, size, i, k) && b[i] == val(0, i, k);
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < B; ++i)
      ok = ok && gather[r * B + i] == val(r, i, k);
  char what[80];
  snprintf(what, sizeof what, "three non-blocking calls together, k=%d", k);
  check(what, ok);
  if (gather != g)
    free(gather);
}

int main(int argc, char **argv) {
  (void)complete; /* selfcheck.h's; this program completes calls itself (finish) */
  begin(&argc, &argv);
  const int forms[Forms] = {NonBlocking, Persistent, Blocking};
  for (int f = 0; f < Forms; ++f) {
    MPI_Comm c = fresh();
    round1(c, forms[f], 0);
    round1(c, forms[f], 1);
    MPI_Comm_free(&c);
  }

  MPI_Comm c = fresh();
  together(c, 0);
  MPI_Barrier(c);
  together(c, 1);
  MPI_Comm_free(&c);

  /* Two persistent requests, started together three times. */
  c = fresh();
  int x[N], rx[N], y[N];
  MPI_Request pr[2];
  int rc = ALLREDUCE_INIT(x, rx, N, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &pr[0]);
  rc |= BCAST_INIT(y, N, MPI_INT, size - 1, c, MPI_INFO_NULL, &pr[1]);
  for (int k = 0; k < 3; ++k) {
    for (int i = 0; i < N; ++i)
      x[i] = val(rank, i, k), y[i] = rank == size - 1 ? val(size - 1, i, k) : -1;
    rc |= STARTALL(2, pr);
    rc |= MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
    int ok = rc == MPI_SUCCESS;
    for (int i = 0; i < N; ++i)
      ok = ok && rx[i] == sum(0, size, i, k) && y[i] == val(size - 1, i, k);
    char what[80];
    snprintf(what, sizeof what, "two persistent requests, run %d", k);
    check(what, ok);
  }
  MPI_Request_free(&pr[0]);
  MPI_Request_free(&pr[1]);
  MPI_Comm_free(&c);

  round1(MPI_COMM_WORLD, NonBlocking, 2);
  const int failed = tally("faults");
  MPI_Finalize();
  return failed;
}
