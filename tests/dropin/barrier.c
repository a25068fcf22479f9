/* tests/dropin/barrier.c: MPI_Barrier through plain MPI — blocking,
 * MPI_Ibarrier (completed by MPI_Wait, by an MPI_Test loop, and with an
 * MPI_Allreduce on the same communicator started while it is pending) and
 * persistent (MPI_Barrier_init or Open MPI 4.1's MPIX_Barrier_init, started
 * three times, then MPI_Request_free) — on MPI_COMM_WORLD, a duplicate, the
 * halves of a split and MPI_COMM_SELF.
 *
 * What a barrier promises is an order, so that is what is checked: in each
 * case one rank at a time enters late (it sleeps first), every rank notes
 * when it entered and left on the node's monotonic clock (one clock for all
 * the ranks of a node, which all ranks of these tests are), and no rank may
 * have left before the last rank of the communicator entered. Rank 0 prints
 * one line per case with how many ranks left early, which compare.sh
 * requires to be the same natively and under the drop-in (0). Exits 1 if any
 * case was wrong. Plain MPI: no collc header. */
#include "casereport.h"

#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void sleepMs(int ms) {
  struct timespec t = {0, (long)ms * 1000000L};
  nanosleep(&t, NULL);
}

enum { WAIT, TEST, OVERLAP };
enum { lateMs = 15 };

/* One barrier of `form` on `comm`, rank `late` of it entering late; how
 * many of its ranks left before the last one entered (on every rank). */
static int oneBarrier(MPI_Comm comm, int mode, int form, MPI_Request *persistent, int late) {
  int me = 0, n = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  if (me == late)
    sleepMs(lateMs);
  double t[2] = {now(), 0};
  int rc = MPI_SUCCESS;
  if (mode == BLOCKING) {
    rc = MPI_Barrier(comm);
  } else {
    MPI_Request r = MPI_REQUEST_NULL;
    if (mode == NONBLOCKING)
      rc = MPI_Ibarrier(comm, &r);
    else
      rc = MPI_Start(persistent);
    MPI_Request *q = mode == NONBLOCKING ? &r : persistent;
    if (rc == MPI_SUCCESS && form == OVERLAP) {
      /* Another collective while the barrier is pending: MPI orders them
       * by the order the ranks start them, the same everywhere. */
      long one = 1, all = 0;
      rc = MPI_Allreduce(&one, &all, 1, MPI_LONG, MPI_SUM, comm);
      if (rc == MPI_SUCCESS && all != n)
        rc = MPI_ERR_OTHER;
    }
    if (rc == MPI_SUCCESS && form == TEST) {
      for (int done = 0; rc == MPI_SUCCESS && !done;)
        rc = MPI_Test(q, &done, MPI_STATUS_IGNORE);
    } else if (rc == MPI_SUCCESS) {
      rc = MPI_Wait(q, MPI_STATUS_IGNORE);
    }
  }
  t[1] = now();
  double *all = malloc(sizeof(double) * 2 * (size_t)n);
  MPI_Allgather(t, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, comm);
  double lastIn = 0;
  for (int q = 0; q < n; ++q)
    lastIn = all[2 * q] > lastIn ? all[2 * q] : lastIn;
  int early = 0;
  for (int q = 0; q < n; ++q)
    early += all[2 * q + 1] < lastIn;
  free(all);
  return rc == MPI_SUCCESS ? early : n;
}

static void barrierCases(MPI_Comm comm, const char *name, int modes) {
  int n = 1;
  MPI_Comm_size(comm, &n);
  static const char *const formName[] = {"", " test", " overlapping an allreduce"};
  for (int mode = BLOCKING; mode < modes; ++mode)
    for (int form = WAIT; form <= (mode == BLOCKING ? WAIT : OVERLAP); ++form) {
      MPI_Request persistent = MPI_REQUEST_NULL;
#ifdef HAVE_PERSISTENT
      if (mode == PERSISTENT && PINIT(Barrier)(comm, MPI_INFO_NULL, &persistent) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
#endif
      int early = 0;
      const int rounds = mode == PERSISTENT ? 3 : 1;
      for (int k = 0; k < rounds; ++k)
        for (int late = 0; late < n; ++late)
          early += oneBarrier(comm, mode, form, &persistent, late);
      if (persistent != MPI_REQUEST_NULL)
        MPI_Request_free(&persistent);
      /* Every rank of `comm` counted the same; the report sums over
       * MPI_COMM_WORLD, so each counts its share. */
      char what[96];
      snprintf(what, sizeof what, "barrier %s %s%s", name, modeName[mode], formName[form]);
      report(what, early, checksum(what, strlen(what)));
    }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* MPICH 4.0's persistent collectives are not run (blocks.c, docs/mpi.md). */
  int modes = 2;
#if defined(HAVE_PERSISTENT) && !defined(MPICH_VERSION)
  modes = 3;
#endif
  barrierCases(MPI_COMM_WORLD, "world", modes);
  MPI_Comm dup, half;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  barrierCases(dup, "dup", modes);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
  barrierCases(half, "half (split, reversed)", modes);
  barrierCases(MPI_COMM_SELF, "self", 2);
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);
  /* A barrier right after a communicator is made and right before it is
   * freed, many times: the first call on each sets collc up. */
  int early = 0;
  for (int k = 0; k < 20; ++k) {
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &c);
    early += oneBarrier(c, BLOCKING, WAIT, NULL, k % size);
    MPI_Comm_free(&c);
  }
  report("barrier on 20 new communicators", early, 0);
  printReport();
  if (rank == 0)
    printf(failures ? "%d cases wrong\n" : "all cases right\n", failures);
  MPI_Finalize();
  return failures ? 1 : 0;
}
