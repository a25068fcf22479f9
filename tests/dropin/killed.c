/* tests/dropin/killed.c: a rank killed in the middle of a job of
 * collectives. Every rank prints its process id ("pid R P") and then runs
 * large MPI_Allreduce and MPI_Iallreduce calls; the last rank kills itself
 * (SIGKILL) after a few, while the others are inside the next. The job must
 * end as it does natively (mpirun reports the killed rank and stops the
 * others) and leave no shared-memory segment of collc's behind (killed.sh
 * checks). Plain MPI. */
#include <mpi.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { N = 1 << 18 };

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  printf("pid %d %ld\n", rank, (long)getpid());
  fflush(stdout);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  int *in = malloc(sizeof(int) * N), *out = malloc(sizeof(int) * N);
  for (int i = 0; i < N; ++i)
    in[i] = rank + i;
  for (int k = 0; k < 1000; ++k) {
    if (k == 5 && rank == size - 1)
      raise(SIGKILL);
    MPI_Request r;
    MPI_Allreduce(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Iallreduce(in, out, N, MPI_INT, MPI_SUM, dup, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  printf("rank %d: not killed\n", rank);
  MPI_Finalize();
  return 0;
}
