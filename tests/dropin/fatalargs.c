/* tests/dropin/fatalargs.c CASE: one erroneous call under MPI's default
 * error handler, MPI_ERRORS_ARE_FATAL — the job must end as it does natively,
 * MPI naming the same error class (fatalargs.sh compares). Every rank makes
 * the same call. Cases: 0 the send buffer given again as the receive buffer
 * (MPI_Allreduce), 1 a negative count (MPI_Allreduce), 2 a root out of range
 * (MPI_Bcast), 3 a null datatype (MPI_Reduce), 4 MPI_IN_PLACE as the receive
 * buffer (MPI_Allgather), 5 the same as 0 through MPI_Iallreduce. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int which = argc > 1 ? atoi(argv[1]) : 0;
  double x[4] = {1, 2, 3, 4}, y[64];
  MPI_Request r;
  switch (which) {
  case 0:
    MPI_Allreduce(x, x, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    break;
  case 1:
    MPI_Allreduce(x, y, -1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    break;
  case 2:
    MPI_Bcast(x, 4, MPI_DOUBLE, size, MPI_COMM_WORLD);
    break;
  case 3:
    MPI_Reduce(x, y, 4, MPI_DATATYPE_NULL, MPI_SUM, 0, MPI_COMM_WORLD);
    break;
  case 4:
    MPI_Allgather(x, 1, MPI_DOUBLE, MPI_IN_PLACE, 1, MPI_DOUBLE, MPI_COMM_WORLD);
    break;
  default:
    MPI_Iallreduce(x, x, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    break;
  }
  printf("case %d: the erroneous call returned\n", which);
  MPI_Finalize();
  return 0;
}
