/* tests/cluster/pingpong.c: what the emulated cluster looks like from MPI.
 *
 * Plain MPI. Rank 0 prints, one per line: each rank's processor name (its
 * node's host name), the size of each rank's shared-memory communicator
 * (MPI_COMM_TYPE_SHARED: the ranks of its node), and the fastest of 50 round
 * trips of 1 byte between rank 0 and the last rank, halved: the one-way
 * latency an emulated link must not undercut. tests/cluster/cluster.sh reads
 * these lines.
 */
#include <mpi.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  char name[MPI_MAX_PROCESSOR_NAME] = {0};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  static char names[64][MPI_MAX_PROCESSOR_NAME];
  MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
             MPI_COMM_WORLD);

  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int nodeSize;
  MPI_Comm_size(node, &nodeSize);
  int sizes[64];
  MPI_Gather(&nodeSize, 1, MPI_INT, sizes, 1, MPI_INT, 0, MPI_COMM_WORLD);

  double best = 1e30;
  const int peer = size - 1;
  char byte = 1;
  for (int i = 0; i < 50 && size > 1; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    if (rank == 0) {
      MPI_Send(&byte, 1, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
      MPI_Recv(&byte, 1, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == peer) {
      MPI_Recv(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    }
    t = MPI_Wtime() - t;
    if (t < best)
      best = t;
  }
  if (rank == 0) {
    for (int r = 0; r < size && r < 64; ++r)
      printf("rank %d host %s node-ranks %d\n", r, names[r], sizes[r]);
    if (size > 1)
      printf("one-way-us %.1f\n", best / 2 * 1e6);
  }
  MPI_Comm_free(&node);
  MPI_Finalize();
  return 0;
}
