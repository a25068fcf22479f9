/* tests/dropin/mixedtypes.c: bcast and allgather where the ranks describe
 * the same type signature with different datatypes and counts — legal MPI
 * (only the signatures must agree). The root may send a strided vector that
 * the others receive as plain ints, one derived element of n ints where the
 * others pass n ints, two ints stored swapped, or ints padded to 8 bytes;
 * an allgather's ranks may each receive with their own layout. Every rank
 * must decide alike (a rank on a plan and another on native MPI hang), and
 * every layout must be exact. Blocking, non-blocking (the datatype freed
 * before the wait) and persistent. Each rank checks its own result against
 * the values the signature carries; rank 0 prints "mixedtypes: ok".
 */
#include <mpi.h>
#if defined(OPEN_MPI) && MPI_VERSION < 4
#include <mpi-ext.h> /* MPIX_*_init: Open MPI's persistent collectives */
#define BCAST_INIT MPIX_Bcast_init
#define ALLGATHER_INIT MPIX_Allgather_init
#else
#define BCAST_INIT MPI_Bcast_init
#define ALLGATHER_INIT MPI_Allgather_init
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum Layout { Ints, Strided, OneBlock, Swapped, Padded, Layouts };
static const char *layoutNames[Layouts] = {"ints", "strided", "one-block", "swapped", "padded"};
enum Form { Blocking, NonBlocking, Persistent, Forms };
static const char *formNames[Forms] = {"blocking", "non-blocking", "persistent"};

static int rank, size, failures;

/* n ints in `layout`: the datatype and count, and where signature element i
 * lies in the buffer (in ints). n is even. */
typedef struct {
  MPI_Datatype type;
  int count;
  int derived;
} Desc;

static Desc describe(int layout, int n) {
  Desc d = {MPI_INT, n, 0};
  if (layout == Strided) {
    MPI_Type_vector(n, 1, 2, MPI_INT, &d.type);
    d.count = 1;
  } else if (layout == OneBlock) {
    MPI_Type_contiguous(n, MPI_INT, &d.type);
    d.count = 1;
  } else if (layout == Swapped) {
    int lengths[2] = {1, 1}, displs[2] = {1, 0};
    MPI_Type_indexed(2, lengths, displs, MPI_INT, &d.type);
    d.count = n / 2;
  } else if (layout == Padded) {
    MPI_Type_create_resized(MPI_INT, 0, 8, &d.type);
    d.count = n;
  }
  if (layout != Ints) {
    MPI_Type_commit(&d.type);
    d.derived = 1;
  }
  return d;
}

/* The position in ints of signature element i of a buffer in `layout`, and
 * the buffer's length in ints for n elements. */
static int at(int layout, int i) {
  switch (layout) {
  case Strided:
  case Padded:
    return 2 * i;
  case Swapped:
    return i ^ 1;
  default:
    return i;
  }
}
static int span(int layout, int n) { return layout == Strided || layout == Padded ? 2 * n : n; }

static void check(const char *what, int ok) {
  if (!ok) {
    ++failures;
    printf("rank %d: WRONG: %s\n", rank, what);
  }
}

static void wait(MPI_Request *req, int form) {
  MPI_Wait(req, MPI_STATUS_IGNORE);
  if (form == Persistent)
    MPI_Request_free(req);
}

/* A bcast of n ints from `root`: the root's layout `rootLayout`, the others'
 * `otherLayout`. */
static void bcastCase(int n, int root, int rootLayout, int otherLayout, int form) {
  const int layout = rank == root ? rootLayout : otherLayout;
  Desc d = describe(layout, n);
  int *buf = calloc((size_t)span(layout, n) + 1, sizeof(int));
  for (int i = 0; rank == root && i < n; ++i)
    buf[at(layout, i)] = 100 + 7 * i + root;
  MPI_Request req = MPI_REQUEST_NULL;
  if (form == Blocking)
    MPI_Bcast(buf, d.count, d.type, root, MPI_COMM_WORLD);
  else if (form == NonBlocking)
    MPI_Ibcast(buf, d.count, d.type, root, MPI_COMM_WORLD, &req);
  else {
    BCAST_INIT(buf, d.count, d.type, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    MPI_Start(&req);
  }
  if (d.derived) /* freed while in flight: MPI says the call completes normally */
    MPI_Type_free(&d.type);
  if (form != Blocking)
    wait(&req, form);
  int ok = 1;
  for (int i = 0; i < n; ++i)
    ok = ok && buf[at(layout, i)] == 100 + 7 * i + root;
  for (int i = 0; layout == Strided && i < n; ++i) /* the gaps stay as they were */
    ok = ok && buf[2 * i + 1] == 0;
  char what[160];
  snprintf(what, sizeof what, "bcast %s n=%d root=%d root %s, others %s", formNames[form], n, root,
           layoutNames[rootLayout], layoutNames[otherLayout]);
  check(what, ok);
  free(buf);
}

/* An allgather of n ints per rank: rank k receives in layout recvOf(k) and
 * sends in sendOf(k) (or in place). */
static int recvOf(int k, int shift) { return (k + shift) % Layouts; }
static int sendOf(int k, int shift) { return (k + 2 * shift + 1) % Layouts; }

static void allgatherCase(int n, int shift, int inPlace, int form) {
  const int rl = recvOf(rank, shift), sl = sendOf(rank, shift);
  Desc r = describe(rl, n), s = describe(sl, n);
  /* Block k of the receive buffer starts at k x count x extent. */
  MPI_Aint lb, extent;
  MPI_Type_get_extent(r.type, &lb, &extent);
  const long blockInts = (long)r.count * (long)extent / (long)sizeof(int);
  int *recv = calloc((size_t)(blockInts * size + span(rl, n)) + 1, sizeof(int));
  int *send = calloc((size_t)span(sl, n) + 1, sizeof(int));
  int *mine = recv + blockInts * rank;
  for (int i = 0; i < n; ++i) {
    send[at(sl, i)] = 1000 * rank + i;
    mine[at(rl, i)] = inPlace ? 1000 * rank + i : 0;
  }
  const void *sb = inPlace ? MPI_IN_PLACE : send;
  MPI_Request req = MPI_REQUEST_NULL;
  if (form == Blocking)
    MPI_Allgather(sb, s.count, s.type, recv, r.count, r.type, MPI_COMM_WORLD);
  else if (form == NonBlocking)
    MPI_Iallgather(sb, s.count, s.type, recv, r.count, r.type, MPI_COMM_WORLD, &req);
  else {
    ALLGATHER_INIT(sb, s.count, s.type, recv, r.count, r.type, MPI_COMM_WORLD, MPI_INFO_NULL,
                   &req);
    MPI_Start(&req);
  }
  if (r.derived)
    MPI_Type_free(&r.type);
  if (s.derived)
    MPI_Type_free(&s.type);
  if (form != Blocking)
    wait(&req, form);
  int ok = 1;
  for (int k = 0; k < size; ++k)
    for (int i = 0; i < n; ++i)
      ok = ok && recv[blockInts * k + at(rl, i)] == 1000 * k + i;
  char what[160];
  snprintf(what, sizeof what, "allgather %s n=%d shift=%d%s (rank %d receives %s, sends %s)",
           formNames[form], n, shift, inPlace ? " in place" : "", rank, layoutNames[rl],
           layoutNames[sl]);
  check(what, ok);
  free(recv);
  free(send);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* Short (the small-message path), medium, and long enough for the
   * segmented and bandwidth plans; n even (the swapped layout's pairs). */
  const int sizes[] = {2, 64, 4096, 70000};
  for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; ++z)
    for (int form = 0; form < Forms; ++form) {
      for (int rootLayout = 0; rootLayout < Layouts; ++rootLayout)
        for (int otherLayout = 0; otherLayout < Layouts; ++otherLayout)
          if (rootLayout == Ints || otherLayout == Ints)
            bcastCase(sizes[z], (rootLayout + otherLayout) % size, rootLayout, otherLayout,
                      form);
      for (int shift = 0; shift < Layouts; ++shift) {
        allgatherCase(sizes[z], shift, 0, form);
        allgatherCase(sizes[z], shift, 1, form);
      }
    }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf(all ? "mixedtypes: %d wrong\n" : "mixedtypes: ok\n", all);
  MPI_Finalize();
  return all != 0;
}
