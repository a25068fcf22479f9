/* tests/dropin/selfcheck.h: what the self-checking drop-in test programs
 * share (plain MPI, no collc): the three forms of a collective call, the
 * persistent _init names of Open MPI 4.1 (MPIX_) or MPI 4, a check that
 * counts and prints what is wrong, and the closing tally on rank 0. */
#ifndef COLLC_TESTS_DROPIN_SELFCHECK_H
#define COLLC_TESTS_DROPIN_SELFCHECK_H

#include <mpi.h>
#if defined(OPEN_MPI) && MPI_VERSION < 4
#include <mpi-ext.h> /* MPIX_*_init: Open MPI's persistent collectives */
#define BCAST_INIT MPIX_Bcast_init
#define ALLGATHER_INIT MPIX_Allgather_init
#define ALLTOALL_INIT MPIX_Alltoall_init
#define SCATTER_INIT MPIX_Scatter_init
#define EXSCAN_INIT MPIX_Exscan_init
#define REDUCE_INIT MPIX_Reduce_init
#else
#define BCAST_INIT MPI_Bcast_init
#define ALLGATHER_INIT MPI_Allgather_init
#define ALLTOALL_INIT MPI_Alltoall_init
#define SCATTER_INIT MPI_Scatter_init
#define EXSCAN_INIT MPI_Exscan_init
#define REDUCE_INIT MPI_Reduce_init
#endif

#include <stdio.h>

enum Form { Blocking, NonBlocking, Persistent, Forms };
static const char *formNames[Forms] = {"blocking", "non-blocking", "persistent"};

static int rank, size, failures;

static void check(const char *what, int ok) {
  if (!ok) {
    ++failures;
    printf("rank %d: WRONG: %s\n", rank, what);
  }
}

/* Completes a call made in `form`: starts a persistent one, frees `type`
 * (if given) while the call is in flight — MPI says the call completes
 * normally — then waits, and frees a persistent request. */
static void complete(MPI_Request *req, int form, MPI_Datatype *type) {
  if (form == Persistent)
    MPI_Start(req);
  if (type)
    MPI_Type_free(type);
  if (form != Blocking)
    MPI_Wait(req, MPI_STATUS_IGNORE);
  if (form == Persistent)
    MPI_Request_free(req);
}

/* MPI_Init, this rank and the world's size, and errors returned (each
 * call's return code is checked). */
static void begin(int *argc, char ***argv) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

/* Sums the failures of all ranks; rank 0 prints "NAME: ok" or how many were
 * wrong. Returns the program's exit status. Call before MPI_Finalize. */
static int tally(const char *name) {
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (all)
      printf("%s: %d wrong\n", name, all);
    else
      printf("%s: ok\n", name);
  }
  return all != 0;
}

#endif
