/* tests/dropin/stats.c: a known mix of calls, so that COLLC_STATS's counts can be
 * checked exactly (tests/dropin/CMakeLists.txt, dropin.stats.calls.*): on
 * MPI_COMM_WORLD, 20 allreduces of 2 ints (8 bytes), 5 of 256 doubles (2 KiB),
 * 1 of a non-contiguous datatype with a user operation (native MPI) and the
 * final check of 1 int (4 bytes); on each half of the ranks (split by parity,
 * named "evens" and "odds", freed before MPI_Finalize), 3 bcasts of 100 bytes.
 * Prints "ok" on rank 0 when every result is right. */
#include <mpi.h>
#include <stdio.h>

/* Sums the two ints of each strided element (ints 0 and 2 of every 3). */
static void stridedSum(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  const int *a = in;
  int *b = inout;
  for (int i = 0; i < *len; ++i) {
    b[3 * i] += a[3 * i];
    b[3 * i + 2] += a[3 * i + 2];
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  int small[2];
  for (int i = 0; i < 20; ++i) {
    small[0] = rank + i;
    small[1] = 1;
    MPI_Allreduce(MPI_IN_PLACE, small, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    bad |= small[0] != size * (size - 1) / 2 + size * i || small[1] != size;
  }
  double large[256];
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 256; ++j)
      large[j] = rank + j;
    MPI_Allreduce(MPI_IN_PLACE, large, 256, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int j = 0; j < 256; ++j)
      bad |= large[j] != (double)size * (size - 1) / 2 + (double)size * j;
  }
  /* Ints 0 and 2 of 3: not contiguous, so native MPI serves it. */
  MPI_Datatype strided;
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  MPI_Op op;
  MPI_Op_create(stridedSum, 1, &op);
  int send[3] = {rank, -1, 1}, recv[3] = {0, 7, 0};
  MPI_Allreduce(send, recv, 1, strided, op, MPI_COMM_WORLD);
  bad |= recv[0] != size * (size - 1) / 2 || recv[2] != size || recv[1] != 7;
  MPI_Op_free(&op);
  MPI_Type_free(&strided);

  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  MPI_Comm_set_name(half, rank % 2 ? "odds" : "evens");
  char bytes[100];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 100; ++j)
      bytes[j] = rank < 2 ? (char)(rank * 50 + i + j) : 0;
    MPI_Bcast(bytes, 100, MPI_BYTE, 0, half);
    for (int j = 0; j < 100; ++j)
      bad |= bytes[j] != (char)((rank % 2) * 50 + i + j);
  }
  MPI_Comm_free(&half);

  int anyBad = 0;
  MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s\n", anyBad ? "WRONG" : "ok");
  MPI_Finalize();
  return 0;
}
