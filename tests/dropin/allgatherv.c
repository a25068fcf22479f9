/* tests/dropin/allgatherv.c: MPI_Allgatherv, MPI_Iallgatherv (the receive
 * datatype freed before the wait in some cases) and the persistent form
 * (started twice, the input changed between) through plain MPI — uneven
 * counts with zeros (all zero, one rank alone, a ramp), displacements one
 * after another, reversed with gaps, and interleaved; MPI_IN_PLACE; a
 * strided receive datatype (one int every 8 bytes: packed and unpacked by
 * the drop-in) whose gaps must stay as they were; a send side of pairs of
 * ints against a receive side of ints. Every rank checks its whole receive
 * buffer (blocks and gaps) against the definition; rank 0 prints one line
 * per case with the wrong elements and a checksum, which compare.sh requires
 * to be the same natively and under the drop-in. Exits 1 if any case was
 * wrong. Plain MPI: no collc header. */
#include "casereport.h"

#include <string.h>

enum { CONSECUTIVE, REVERSED, INTERLEAVED };
static const char *const layoutName[] = {"consecutive", "reversed with gaps", "interleaved"};
enum { PLAIN, INPLACE, STRIDED, PAIRS };
static const char *const variantName[] = {"", " in place", " strided", " sent as pairs"};
static const int32_t sentinel = -7;
static MPI_Datatype pairType, stridedType;
/* The communicator of the calls: the world, or a fresh duplicate whose first
 * collective is the case's (under the drop-in, one that waits its turn). */
static MPI_Comm comm;

static int32_t value(int from, long i) { return (int32_t)(from * 100003 + (i * 7) % 9973); }

/* The counts of pattern `k` for rank b. */
static int countOf(int k, int b, long scale) {
  switch (k) {
  case 0:
    return (int)(((b * 37 + 11) % 50) * (b % 3 == 1 ? 0 : 1) * scale);
  case 1:
    return 0;
  case 2:
    return b == size - 1 ? (int)(5003 * scale) : 0;
  default:
    return (int)((b + 1) * scale);
  }
}

/* mode: 0 MPI_Allgatherv; 1 MPI_Iallgatherv; 2 the same with its receive
 * datatype (a duplicate of the strided one) freed before MPI_Wait; 3 the
 * persistent form, started twice (the check is of the second run, whose
 * input differs: value() + 1000000 for the first). */
static void runCase(int pattern, int layout, int variant, int mode) {
  /* PAIRS sends count/2 pairs: even counts only. */
  const long scale = variant == PAIRS ? 2 : 1;
  int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
  long total = 0;
  for (int b = 0; b < size; ++b) {
    counts[b] = countOf(pattern, b, scale);
    total += counts[b];
  }
  /* Displacements in elements of the receive datatype. */
  long span = 0;
  if (layout == CONSECUTIVE) {
    for (int b = 0; b < size; ++b)
      displs[b] = (int)span, span += counts[b];
  } else if (layout == REVERSED) {
    for (int b = size - 1; b >= 0; --b)
      displs[b] = (int)span, span += counts[b] + 3;
  } else { /* even ranks first, then odd, a gap of 1 after each */
    for (int odd = 0; odd < 2; ++odd)
      for (int b = odd; b < size; b += 2)
        displs[b] = (int)span, span += counts[b] + 1;
  }
  const long stride = variant == STRIDED ? 2 : 1;
  const long ints = span * stride + 1;
  int32_t *recv = malloc(sizeof(int32_t) * (size_t)ints);
  int32_t *send = malloc(sizeof(int32_t) * (size_t)(counts[rank] + 1));
  for (long k = 0; k < ints; ++k)
    recv[k] = sentinel;
  const int32_t first = mode == 3 ? 1000000 : 0; /* the persistent form's first input */
  for (long i = 0; i < counts[rank]; ++i)
    send[i] = value(rank, i) + first;
  if (variant == INPLACE)
    for (long i = 0; i < counts[rank]; ++i)
      recv[((long)displs[rank] + i) * stride] = value(rank, i) + first;
  MPI_Datatype rtype = variant == STRIDED ? stridedType : MPI_INT;
  if (mode == 2)
    MPI_Type_dup(stridedType, &rtype);
  const void *from = variant == INPLACE ? MPI_IN_PLACE : send;
  const int sendcount = variant == INPLACE ? 0 : variant == PAIRS ? counts[rank] / 2 : counts[rank];
  const MPI_Datatype stype =
      variant == INPLACE ? MPI_DATATYPE_NULL : variant == PAIRS ? pairType : MPI_INT;
  int rc;
  if (mode == 0) {
    rc = MPI_Allgatherv(from, sendcount, stype, recv, counts, displs, rtype, comm);
  } else if (mode == 3) {
#ifdef HAVE_PERSISTENT
    MPI_Request req;
    rc = PINIT(Allgatherv)(from, sendcount, stype, recv, counts, displs, rtype, comm,
                           MPI_INFO_NULL, &req);
    for (int run = 0; run < 2 && rc == MPI_SUCCESS; ++run) {
      if (run == 1) { /* the second input */
        for (long i = 0; i < counts[rank]; ++i)
          send[i] = value(rank, i);
        if (variant == INPLACE)
          for (long i = 0; i < counts[rank]; ++i)
            recv[((long)displs[rank] + i) * stride] = value(rank, i);
      }
      rc = MPI_Start(&req);
      if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    if (rc == MPI_SUCCESS)
      rc = MPI_Request_free(&req);
#else
    rc = MPI_ERR_OTHER;
#endif
  } else {
    MPI_Request req;
    rc = MPI_Iallgatherv(from, sendcount, stype, recv, counts, displs, rtype, comm, &req);
    if (mode == 2)
      MPI_Type_free(&rtype);
    if (rc == MPI_SUCCESS)
      rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  /* Every int: a block's element where one lies, else untouched. */
  int wrong = rc != MPI_SUCCESS;
  for (long k = 0; k < ints; ++k) {
    int32_t want = sentinel;
    if (k % stride == 0)
      for (int b = 0; b < size; ++b) {
        const long e = k / stride - displs[b];
        if (e >= 0 && e < counts[b])
          want = value(b, e);
      }
    wrong += recv[k] != want;
  }
  char what[96];
  snprintf(what, sizeof what, "%s pattern %d, %s, %ld elements%s%s",
           mode == 3 ? "allgatherv_init" : mode ? "iallgatherv" : "allgatherv", pattern,
           layoutName[layout], total,
           variantName[variant], mode == 2 ? " (freed)" : "");
  report(what, wrong, checksum(recv, sizeof(int32_t) * (size_t)ints));
  free(counts);
  free(displs);
  free(recv);
  free(send);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Type_contiguous(2, MPI_INT, &pairType);
  MPI_Type_commit(&pairType);
  MPI_Type_create_resized(MPI_INT, 0, 8, &stridedType);
  MPI_Type_commit(&stridedType);
  comm = MPI_COMM_WORLD;
  for (int pattern = 0; pattern < 4; ++pattern)
    for (int layout = CONSECUTIVE; layout <= INTERLEAVED; ++layout)
      for (int variant = PLAIN; variant <= PAIRS; ++variant) {
        runCase(pattern, layout, variant, 0);
        if (layout != INTERLEAVED)
          runCase(pattern, layout, variant, 1);
        /* (MPICH 4.0's own persistent collectives are wrong: blocks.c.) */
#if defined(HAVE_PERSISTENT) && !defined(MPICH_VERSION)
        if (layout != CONSECUTIVE)
          runCase(pattern, layout, variant, 3);
#endif
      }
  runCase(0, REVERSED, STRIDED, 2);
  runCase(3, CONSECUTIVE, STRIDED, 2);
  /* The first collective on a new communicator, non-blocking: staged and not. */
  for (int variant = PLAIN; variant <= STRIDED; variant += STRIDED - PLAIN) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    runCase(0, variant == PLAIN ? CONSECUTIVE : REVERSED, variant, 1);
    MPI_Comm_free(&comm);
  }
  comm = MPI_COMM_WORLD;
  printReport();
  MPI_Type_free(&pairType);
  MPI_Type_free(&stridedType);
  if (rank == 0)
    printf("%s\n", failures ? "FAILED" : "all cases right");
  MPI_Finalize();
  return failures ? 1 : 0;
}
