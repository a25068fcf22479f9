/* tests/dropin/nbreturn.c: a non-blocking or persistent collective returns
 * before the other ranks have called it. The ranks start it one after
 * another: rank k waits for a token from rank k-1, starts the collective,
 * then passes the token on to rank k+1, and only then waits for the
 * collective. A start that waited for its peers would never see rank k+1
 * arrive. Every collective the drop-in serves, short messages (the shared
 * memory fast path) and longer ones. Rank 0 prints one checksum line per
 * case, to be compared with the native run.
 */
#include <mpi.h>
#if defined(OPEN_MPI) && MPI_VERSION < 4
#include <mpi-ext.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum Kind { Allreduce, Reduce, Bcast, Allgather, ReduceScatterBlock, ReduceScatter, Scan, Exscan,
            PersistentAllreduce, Kinds };
static const char *names[Kinds] = {"iallreduce", "ireduce", "ibcast", "iallgather",
                                   "ireduce_scatter_block", "ireduce_scatter", "iscan",
                                   "iexscan", "allreduce_init"};

static int rank, size;

static void passToken(int before) {
  int token = 7;
  if (before && rank > 0)
    MPI_Recv(&token, 1, MPI_INT, rank - 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (!before && rank + 1 < size)
    MPI_Send(&token, 1, MPI_INT, rank + 1, 99, MPI_COMM_WORLD);
}

/* Starts case `k` with n ints per rank; returns the request. */
static MPI_Request start(int k, int n, int *in, int *out, int *counts) {
  MPI_Request req = MPI_REQUEST_NULL;
  switch (k) {
  case Allreduce:
    MPI_Iallreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    break;
  case Reduce:
    MPI_Ireduce(in, out, n, MPI_INT, MPI_SUM, size - 1, MPI_COMM_WORLD, &req);
    break;
  case Bcast:
    if (rank == size / 2)
      memcpy(out, in, (size_t)n * sizeof(int));
    MPI_Ibcast(out, n, MPI_INT, size / 2, MPI_COMM_WORLD, &req);
    break;
  case Allgather:
    MPI_Iallgather(in, n, MPI_INT, out, n, MPI_INT, MPI_COMM_WORLD, &req);
    break;
  case ReduceScatterBlock:
    MPI_Ireduce_scatter_block(in, out, n / size, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    break;
  case ReduceScatter:
    MPI_Ireduce_scatter(in, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    break;
  case Scan:
    MPI_Iscan(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    break;
  case Exscan:
    MPI_Iexscan(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    break;
  case PersistentAllreduce:
#if MPI_VERSION >= 4
    MPI_Allreduce_init(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
#else
    MPIX_Allreduce_init(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
#endif
    break;
  }
  return req;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int sizes[] = {1, 2 * size, 3000 * size};
  for (int s = 0; s < 3; ++s) {
    const int n = sizes[s];
    int *in = malloc(sizeof(int) * (size_t)n * size), *out = malloc(sizeof(int) * (size_t)n * size);
    int *counts = malloc(sizeof(int) * size);
    for (int r = 0; r < size; ++r)
      counts[r] = n / size + (r < n % size);
    for (int k = 0; k < Kinds; ++k) {
      if ((k == ReduceScatterBlock) && n % size)
        continue;
      for (int i = 0; i < n * size; ++i) {
        in[i] = (rank + 1) * 1000 + i % 97;
        out[i] = -1;
      }
      MPI_Request req = MPI_REQUEST_NULL;
      if (k == PersistentAllreduce) {
        req = start(k, n, in, out, counts); /* the init call is collective */
        passToken(1);
        MPI_Start(&req);
      } else {
        passToken(1);
        req = start(k, n, in, out, counts);
      }
      passToken(0);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      if (k == PersistentAllreduce)
        MPI_Request_free(&req);
      /* What each rank received, as one checksum, gathered at rank 0. */
      const int valid = k == Allgather ? n * size
                        : k == ReduceScatterBlock ? n / size
                        : k == ReduceScatter ? counts[rank]
                        : (k == Reduce && rank != size - 1) || (k == Exscan && rank == 0) ? 0
                                                                                          : n;
      long sum = 0;
      for (int i = 0; i < valid; ++i)
        sum = sum * 31 + out[i];
      long *all = rank == 0 ? malloc(sizeof(long) * size) : NULL;
      MPI_Gather(&sum, 1, MPI_LONG, all, 1, MPI_LONG, 0, MPI_COMM_WORLD);
      if (rank == 0) {
        printf("%s n=%d:", names[k], n);
        for (int r = 0; r < size; ++r)
          printf(" %ld", all[r]);
        printf("\n");
        free(all);
      }
    }
    free(in);
    free(out);
    free(counts);
  }
  if (rank == 0)
    printf("nbreturn: done\n");
  MPI_Finalize();
  return 0;
}
