/* tests/dropin/casereport.h: the case table of family.c and blocks.c (plain
 * MPI, no collc). Each rank records per case what it was, how many of its
 * elements were wrong and a checksum of its result; at the end rank 0
 * gathers them (one collective, not one per case: oversubscribed ranks make
 * each collective slow) and prints one line per case with the sum of wrong
 * elements and a checksum over the ranks, which compare.sh requires to be the
 * same natively and under the drop-in. Defines rank, size and failures,
 * the three forms of a call, and PINIT(Name) for the persistent form's
 * function (Open MPI 4.1's MPIX_Name_init or MPI 4's MPI_Name_init), with
 * HAVE_PERSISTENT where the MPI has them. */
#ifndef COLLC_TESTS_DROPIN_CASEREPORT_H
#define COLLC_TESTS_DROPIN_CASEREPORT_H

#include <mpi.h>
#if defined(OPEN_MPI) && MPI_VERSION < 4
#include <mpi-ext.h> /* MPIX_*_init: Open MPI's persistent collectives */
#define PINIT(name) MPIX_##name##_init
#else
#define PINIT(name) MPI_##name##_init
#endif
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) || MPI_VERSION >= 4
#define HAVE_PERSISTENT 1
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size, failures;

enum { BLOCKING, NONBLOCKING, PERSISTENT };
static const char *const modeName[] = {"blocking", "nonblocking", "persistent"};

static uint64_t checksum(const void *buf, size_t bytes) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < bytes; ++i)
    h = (h ^ ((const unsigned char *)buf)[i]) * 1099511628211ull;
  return h;
}

enum { maxCases = 400 };
static char caseName[maxCases][96];
static int caseWrong[maxCases];
static uint64_t caseSum[maxCases];
static int numCases;

static void report(const char *what, int wrong, uint64_t sum) {
  if (numCases == maxCases)
    MPI_Abort(MPI_COMM_WORLD, 3);
  snprintf(caseName[numCases], sizeof caseName[0], "%s", what);
  caseWrong[numCases] = wrong;
  caseSum[numCases] = sum;
  ++numCases;
}

/* Collective over MPI_COMM_WORLD; counts the failed cases on rank 0. */
static void printReport(void) {
  int *wrong = rank == 0 ? malloc(sizeof(int) * (size_t)(maxCases * size)) : NULL;
  uint64_t *sums = rank == 0 ? malloc(sizeof(uint64_t) * (size_t)(maxCases * size)) : NULL;
  MPI_Gather(caseWrong, maxCases, MPI_INT, wrong, maxCases, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Gather(caseSum, maxCases, MPI_UINT64_T, sums, maxCases, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (rank != 0)
    return;
  for (int k = 0; k < numCases; ++k) {
    int total = 0;
    uint64_t h = 1469598103934665603ull;
    for (int r = 0; r < size; ++r) {
      total += wrong[r * maxCases + k];
      h = (h ^ sums[r * maxCases + k]) * 1099511628211ull;
    }
    printf("%-64s wrong=%d sum=%016llx\n", caseName[k], total, (unsigned long long)h);
    if (total)
      ++failures;
  }
  free(wrong);
  free(sums);
}

#endif /* COLLC_TESTS_DROPIN_CASEREPORT_H */
