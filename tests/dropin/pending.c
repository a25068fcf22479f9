/* tests/dropin/pending.c: freeing a communicator while a non-blocking
 * collective on it is still pending, which MPI allows ("pending operations
 * complete normally"). Open MPI 4.1.4's own MPI_Iallreduce crashes on it, so
 * this program checks its results against values computed locally instead of
 * against a native run, and is only run under libcollc_mpi.so.
 * Prints "pending: ok" or the first wrong element.
 */
#include <mpi.h>

#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  enum { n = 4096, rounds = 3 };
  static int in[rounds][n], out[rounds][n];
  int bad = 0;
  for (int k = 0; k < 10 && !bad; ++k) {
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Request req[rounds];
    for (int j = 0; j < rounds; ++j) {
      for (int i = 0; i < n; ++i)
        in[j][i] = rank * (i % 5) + j + k;
      MPI_Iallreduce(in[j], out[j], n, MPI_INT, MPI_SUM, d, &req[j]);
    }
    MPI_Comm_free(&d);
    MPI_Waitall(rounds, req, MPI_STATUSES_IGNORE);
    for (int j = 0; j < rounds && !bad; ++j)
      for (int i = 0; i < n; ++i) {
        const int expected = (size * (size - 1) / 2) * (i % 5) + size * (j + k);
        if (out[j][i] != expected) {
          printf("pending: rank %d round %d element %d: got %d, expected %d\n", rank, j, i,
                 out[j][i], expected);
          bad = 1;
          break;
        }
      }
  }
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && !bad)
    printf("pending: ok\n");
  MPI_Finalize();
  return bad;
}
