/* examples/app.c: a plain MPI program (no collc header, not linked with collc)
 * to run under the drop-in, libcollc_mpi.so.
 *
 *   mpicc examples/app.c -o app
 *   mpirun -np 4 --oversubscribe ./app                                                  # native MPI
 *   mpirun -np 4 --oversubscribe -x LD_PRELOAD=$PWD/build/lib/libcollc_mpi.so ./app     # through collc
 *
 * Sums vectors of doubles with MPI_Allreduce at a few sizes (blocking and
 * MPI_Iallreduce), finds a maximum of ints, reduces to the last rank and
 * broadcasts from it, checks every result against its closed form, and
 * prints "OK" on rank 0 (or what was wrong, and exits with 1). */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

static int bad = 0;

static void expect(int ok, const char *what, int rank) {
  if (!ok && bad++ < 5)
    fprintf(stderr, "rank %d: wrong result of %s\n", rank, what);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);

  /* in[i] = rank + i/2 sums exactly: p(p-1)/2 + p*i/2. */
  const int sizes[] = {1, 1000, 1 << 17}; /* 8 B, 8000 B, 1 MiB */
  double *in = malloc(sizeof(double) << 17), *out = malloc(sizeof(double) << 17);
  if (!in || !out)
    MPI_Abort(MPI_COMM_WORLD, 2);
  for (int s = 0; s < 3; ++s) {
    int n = sizes[s];
    for (int rep = 0; rep < 10; ++rep) {
      for (int i = 0; i < n; ++i)
        in[i] = rank + 0.5 * i;
      if (rep % 2 == 0) {
        MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      } else {
        MPI_Request req;
        MPI_Iallreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
      }
      for (int i = 0; i < n; ++i)
        expect(out[i] == 0.5 * p * (p - 1) + 0.5 * p * i, "MPI_Allreduce (double, sum)", rank);
    }
  }

  int mine = 3 * rank + 1, most = 0;
  MPI_Allreduce(&mine, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  expect(most == 3 * (p - 1) + 1, "MPI_Allreduce (int, max)", rank);

  const int root = p - 1;
  for (int i = 0; i < 1000; ++i)
    in[i] = rank + 0.5 * i;
  MPI_Reduce(in, out, 1000, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
  if (rank == root)
    for (int i = 0; i < 1000; ++i)
      expect(out[i] == 0.5 * p * (p - 1) + 0.5 * p * i, "MPI_Reduce", rank);

  for (int i = 0; i < 1000; ++i)
    out[i] = rank == root ? 2.0 * i : -1.0;
  MPI_Bcast(out, 1000, MPI_DOUBLE, root, MPI_COMM_WORLD);
  for (int i = 0; i < 1000; ++i)
    expect(out[i] == 2.0 * i, "MPI_Bcast", rank);

  int anybad = 0;
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (anybad)
      printf("FAILED: %d wrong results\n", anybad);
    else
      printf("OK\n");
  }
  free(in);
  free(out);
  MPI_Finalize();
  return anybad ? 1 : 0;
}
