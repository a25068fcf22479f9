/* tests/dropin/profiler.c: a small PMPI profiling library, built as
 * libcollc-test-profiler.so, of the kind mpiP or Score-P are: it defines
 * MPI_Allreduce, MPI_Bcast, MPI_Allgather and MPI_Iallreduce, counts and
 * times each call and passes it on through PMPI_*; at MPI_Finalize rank 0
 * prints one line per function with the calls of all ranks:
 *   profiler: MPI_Allreduce calls=N
 * Plain MPI, no collc. tests/dropin/profiler.sh preloads it beside
 * libcollc_mpi.so in both orders (docs/dropin.md, "PMPI tools"). */
#include <mpi.h>

#include <stdio.h>

enum { Allreduce, Bcast, Allgather, Iallreduce, Count };
static const char *const names[Count] = {"MPI_Allreduce", "MPI_Bcast", "MPI_Allgather",
                                         "MPI_Iallreduce"};
static long long calls[Count];
static double seconds[Count];

#define TIMED(which, call)                                                                    \
  do {                                                                                        \
    double t0 = PMPI_Wtime();                                                                 \
    int rc = call;                                                                            \
    seconds[which] += PMPI_Wtime() - t0;                                                      \
    ++calls[which];                                                                           \
    return rc;                                                                                \
  } while (0)

int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  TIMED(Allreduce, PMPI_Allreduce(s, r, n, t, op, c));
}
int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c) {
  TIMED(Bcast, PMPI_Bcast(b, n, t, root, c));
}
int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                  MPI_Comm c) {
  TIMED(Allgather, PMPI_Allgather(s, sn, st, r, rn, rt, c));
}
int MPI_Iallreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                   MPI_Request *q) {
  TIMED(Iallreduce, PMPI_Iallreduce(s, r, n, t, op, c, q));
}

int MPI_Finalize(void) {
  int rank = 0;
  long long all[Count];
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Reduce(calls, all, Count, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    for (int i = 0; i < Count; ++i)
      fprintf(stderr, "profiler: %s calls=%lld\n", names[i], all[i]);
  return PMPI_Finalize();
}
