/* tests/dropin/vblocks.c: MPI_Gatherv, MPI_Scatterv and MPI_Alltoallv
 * through plain MPI, blocking, non-blocking (MPI_I*) and persistent
 * (MPI_*_init or Open MPI 4.1's MPIX_*_init, started twice); and
 * MPI_Alltoallw (blocking), strided as a datatype on every other block.
 *
 * Per-pair counts from three symmetric patterns (all zero; small and uneven
 * with zeros; one long block of 36 KB per rank beside short ones);
 * displacements consecutive, or reversed with gaps between the blocks;
 * MPI_IN_PLACE as each man page defines it (a gatherv's root's sendbuf, a
 * scatterv's root's recvbuf, an alltoallv's sendbuf); a strided datatype on
 * both sides (one int every 8 bytes: packed and unpacked by the drop-in),
 * whose gaps must stay as they were; the arguments MPI ignores passed as
 * null (buffers, count arrays, displacements and datatypes at the ranks
 * that do not use them); every root. Every rank checks every int of its
 * receive buffer — the blocks against the definition, everything else
 * (gaps, a non-root's buffer MPI does not write) untouched — and rank 0
 * prints one line per case with the number of wrong ints and a checksum,
 * which compare.sh requires to be the same natively and under the drop-in.
 * Exits 1 if any case was wrong. Plain MPI: no collc header. */
#include "casereport.h"

#include <string.h>

enum { GATHERV, SCATTERV, ALLTOALLV, ALLTOALLW };
static const char *const collName[] = {"gatherv", "scatterv", "alltoallv", "alltoallw"};
enum { PLAIN, REVERSED, INPLACE, STRIDED, NULLS };
static const char *const variantName[] = {"", " reversed with gaps", " in place", " strided",
                                          " ignored arguments null"};

static MPI_Datatype stridedType; /* one int, extent 8: every other int */
static const int32_t sentinel = -7;

/* What rank `from` sends to rank `to`, element i. */
static int32_t value(int from, int to, long i) {
  return (int32_t)(from * 100003 + to * 1009 + (i * 7) % 9973);
}

/* Elements `from` sends `to` (symmetric, as an in-place alltoallv needs). */
static int pairCount(int pattern, int from, int to) {
  const int a = from, b = to;
  switch (pattern) {
  case 0:
    return 0;
  case 1:
    return (a + b) % 3 == 0 ? 0 : ((a + b) * 5 + a * b) % 7 + 1;
  default:
    return a == b ? 9002 : (a + b) % 2 * 3;
  }
}

/* One side of a call: `blocks` blocks, block b `counts[b]` elements, its
 * element k at int intAt[b] + k * stride[b]; `displs[b]` is MPI's
 * displacement (in elements of the side's datatype; alltoallw: in bytes),
 * `types[b]` the block's datatype (MPI_INT, or one int every 8 bytes). */
typedef struct {
  int used, blocks;
  int counts[64], displs[64], stride[64];
  long intAt[64];
  MPI_Datatype types[64];
  int32_t *buf;
  long ints;
} Side;

static int32_t *elem(const Side *s, int b, long k) {
  return &s->buf[s->intAt[b] + k * s->stride[b]];
}

/* Strided: every block of a v-variant strided; every other block of an
 * alltoallw (a datatype per block). Reversed: block b after blocks b+1..,
 * 4 ints apart. A one-block side lies at 0. */
static void layOut(Side *s, int coll, int variant) {
  long at = 0;
  for (int k = 0; k < s->blocks; ++k) {
    const int b = variant == REVERSED && s->blocks > 1 ? s->blocks - 1 - k : k;
    s->stride[b] = variant == STRIDED && (coll != ALLTOALLW || b % 2) ? 2 : 1;
    s->types[b] = s->stride[b] == 2 ? stridedType : MPI_INT;
    if (variant == REVERSED && s->blocks > 1)
      at += 4;
    s->intAt[b] = at;
    s->displs[b] = coll == ALLTOALLW ? (int)(at * 4) : (int)(at / s->stride[b]);
    at += (long)s->counts[b] * s->stride[b];
  }
  s->ints = at + 8;
  s->buf = malloc(sizeof(int32_t) * (size_t)s->ints);
  for (long i = 0; i < s->ints; ++i)
    s->buf[i] = sentinel;
}

/* The receive buffer before a call: untouched ints, and in place the input,
 * which is in recvbuf: the gatherv root's own block, every block an
 * alltoallv sends (its counts are the receive side's). */
static void prefill(int coll, Side *recv, int inPlace) {
  for (long i = 0; i < recv->ints; ++i)
    recv->buf[i] = sentinel;
  if (inPlace && coll == GATHERV)
    for (long i = 0; i < recv->counts[rank]; ++i)
      *elem(recv, rank, i) = value(rank, rank, i);
  if (inPlace && coll >= ALLTOALLV)
    for (int b = 0; b < size; ++b)
      for (long i = 0; i < recv->counts[b]; ++i)
        *elem(recv, b, i) = value(rank, b, i);
}

static void vCase(int coll, int mode, int pattern, int variant, int root) {
  const MPI_Datatype type = variant == STRIDED ? stridedType : MPI_INT; /* (v-variants) */
  const int isRoot = rank == root;
  Side send = {0}, recv = {0};
  send.blocks = coll == GATHERV ? 1 : size;
  recv.blocks = coll == SCATTERV ? 1 : size;
  send.used = coll != SCATTERV || isRoot;
  recv.used = coll != GATHERV || isRoot;
  const int inPlace = variant == INPLACE && (coll >= ALLTOALLV || isRoot);
  /* send: block b goes to rank b (a gatherv's one block to the root);
   * recv: block b comes from rank b (a scatterv's one block from the root) */
  for (int b = 0; b < send.blocks; ++b)
    send.counts[b] = pairCount(pattern, rank, coll == GATHERV ? root : b);
  for (int b = 0; b < recv.blocks; ++b)
    recv.counts[b] = pairCount(pattern, coll == SCATTERV ? root : b, rank);
  layOut(&send, coll, variant);
  layOut(&recv, coll, variant);
  for (int b = 0; b < send.blocks; ++b) {
    const int to = coll == GATHERV ? root : b;
    for (long i = 0; i < send.counts[b]; ++i)
      *elem(&send, b, i) = value(rank, to, i);
  }
  prefill(coll, &recv, inPlace);

  const int nulls = variant == NULLS && !isRoot;
  const void *sbuf = inPlace && coll != SCATTERV ? MPI_IN_PLACE
                     : nulls && coll == SCATTERV   ? NULL
                                                   : send.buf;
  void *rbuf = inPlace && coll == SCATTERV ? MPI_IN_PLACE
               : nulls && coll == GATHERV  ? NULL
                                           : recv.buf;
  const int *rcounts = nulls ? NULL : recv.counts, *rdispls = nulls ? NULL : recv.displs;
  const int *scounts = nulls ? NULL : send.counts, *sdispls = nulls ? NULL : send.displs;
  const MPI_Datatype ignored = nulls ? MPI_DATATYPE_NULL : type;
  MPI_Request req = MPI_REQUEST_NULL;
  const int nb = mode == NONBLOCKING;
#ifdef HAVE_PERSISTENT
  if (mode == PERSISTENT) { /* started twice, the receive buffer reset between */
    if (coll == GATHERV)
      PINIT(Gatherv)(sbuf, send.counts[0], type, rbuf, rcounts, rdispls, ignored, root,
                     MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    else if (coll == SCATTERV)
      PINIT(Scatterv)(sbuf, scounts, sdispls, ignored, rbuf, recv.counts[0], type, root,
                      MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    else
      PINIT(Alltoallv)(sbuf, send.counts, send.displs, type, rbuf, recv.counts, recv.displs,
                       type, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    for (int k = 0; k < 2; ++k) {
      if (k)
        prefill(coll, &recv, inPlace);
      MPI_Start(&req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&req);
  } else
#endif
  switch (coll) {
  case ALLTOALLW: /* (blocking only) */
    MPI_Alltoallw(sbuf, send.counts, send.displs, send.types, rbuf, recv.counts, recv.displs,
                  recv.types, MPI_COMM_WORLD);
    break;
  case GATHERV:
    if (nb)
      MPI_Igatherv(sbuf, send.counts[0], type, rbuf, rcounts, rdispls, ignored, root,
                   MPI_COMM_WORLD, &req);
    else
      MPI_Gatherv(sbuf, send.counts[0], type, rbuf, rcounts, rdispls, ignored, root,
                  MPI_COMM_WORLD);
    break;
  case SCATTERV:
    if (nb)
      MPI_Iscatterv(sbuf, scounts, sdispls, ignored, rbuf, recv.counts[0], type, root,
                    MPI_COMM_WORLD, &req);
    else
      MPI_Scatterv(sbuf, scounts, sdispls, ignored, rbuf, recv.counts[0], type, root,
                   MPI_COMM_WORLD);
    break;
  default:
    if (nb)
      MPI_Ialltoallv(sbuf, send.counts, send.displs, type, rbuf, recv.counts, recv.displs, type,
                     MPI_COMM_WORLD, &req);
    else
      MPI_Alltoallv(sbuf, send.counts, send.displs, type, rbuf, recv.counts, recv.displs, type,
                    MPI_COMM_WORLD);
    break;
  }
  MPI_Wait(&req, MPI_STATUS_IGNORE);

  /* Every int of the receive buffer: the blocks MPI writes, and the rest as
   * it was (a scatterv's root in place: its recvbuf is not used). */
  int32_t *want = malloc(sizeof(int32_t) * (size_t)recv.ints);
  for (long i = 0; i < recv.ints; ++i)
    want[i] = sentinel;
  if (coll == GATHERV && inPlace)
    for (long i = 0; i < recv.counts[rank]; ++i)
      want[recv.intAt[rank] + i * recv.stride[rank]] = value(rank, rank, i);
  if (recv.used && !(coll == SCATTERV && inPlace))
    for (int b = 0; b < recv.blocks; ++b) {
      const int from = coll == SCATTERV ? root : b;
      const int to = coll == GATHERV ? root : rank;
      for (long i = 0; i < recv.counts[b]; ++i)
        want[recv.intAt[b] + i * recv.stride[b]] = value(from, to, i);
    }
  int wrong = 0;
  for (long i = 0; i < recv.ints; ++i)
    wrong += recv.buf[i] != want[i];
  char what[96];
  snprintf(what, sizeof what, "%s %s pattern=%d root=%d%s", collName[coll], modeName[mode],
           pattern, root, variantName[variant]);
  report(what, wrong, checksum(recv.buf, sizeof(int32_t) * (size_t)recv.ints));
  free(want);
  free(send.buf);
  free(recv.buf);
}

/* The same buffers and datatypes, three calls whose counts differ (the same
 * total): each call's own counts must hold, not an earlier call's. */
static void repeated(void) {
  enum { n = 4 };
  const long ints = (long)n * size * (size > 1 ? size : 2);
  int32_t *sendbuf = malloc(sizeof(int32_t) * (size_t)ints);
  int32_t *recvbuf = malloc(sizeof(int32_t) * (size_t)ints);
  int counts[64], displs[64];
  for (int k = 0; k < 3; ++k) {
    /* k = 1: rank r's block for rank b has (r + b) % 2 ? 2n : 0 ints, else n */
    long at = 0;
    for (int b = 0; b < size; ++b) {
      counts[b] = k == 1 ? ((rank + b) % 2 ? 2 * n : 0) : n;
      displs[b] = (int)at;
      for (long i = 0; i < counts[b]; ++i)
        sendbuf[at + i] = value(rank, b, i + 1000 * k);
      at += counts[b];
    }
    for (long i = 0; i < ints; ++i)
      recvbuf[i] = sentinel;
    MPI_Alltoallv(sendbuf, counts, displs, MPI_INT, recvbuf, counts, displs, MPI_INT,
                  MPI_COMM_WORLD);
    int wrong = 0;
    for (int b = 0; b < size; ++b)
      for (long i = 0; i < counts[b]; ++i)
        wrong += recvbuf[displs[b] + i] != value(b, rank, i + 1000 * k);
    char what[96];
    snprintf(what, sizeof what, "alltoallv repeated, call %d", k);
    report(what, wrong, checksum(recvbuf, sizeof(int32_t) * (size_t)ints));
  }
  free(sendbuf);
  free(recvbuf);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 64)
    MPI_Abort(MPI_COMM_WORLD, 2);
  MPI_Type_create_resized(MPI_INT, 0, 8, &stridedType);
  MPI_Type_commit(&stridedType);
  /* MPICH 4.0's own persistent collectives are wrong natively (blocks.c):
   * not run there. */
  int modes = 2;
#if defined(HAVE_PERSISTENT) && !defined(MPICH_VERSION)
  modes = 3;
#endif
  for (int mode = BLOCKING; mode < modes; ++mode)
    for (int coll = GATHERV; coll <= (mode == BLOCKING ? ALLTOALLW : ALLTOALLV); ++coll)
      for (int pattern = 0; pattern < 3; ++pattern)
        for (int variant = PLAIN; variant <= NULLS; ++variant) {
          if (variant == NULLS && coll >= ALLTOALLV)
            continue;
          vCase(coll, mode, pattern, variant, coll >= ALLTOALLV ? 0 : size - 1);
        }
  for (int root = 0; root < size - 1; ++root) {
    vCase(GATHERV, BLOCKING, 1, PLAIN, root);
    vCase(GATHERV, NONBLOCKING, 1, INPLACE, root);
    vCase(SCATTERV, BLOCKING, 1, REVERSED, root);
    vCase(SCATTERV, NONBLOCKING, 1, INPLACE, root);
  }
  repeated();
  printReport();
  MPI_Type_free(&stridedType);
  if (rank == 0)
    printf("%s\n", failures ? "FAILED" : "all cases right");
  MPI_Finalize();
  return failures ? 1 : 0;
}
