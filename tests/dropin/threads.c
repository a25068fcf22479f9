/* tests/dropin/threads.c: concurrent collectives on different
 * communicators under MPI_THREAD_MULTIPLE.
 *
 * Each of THREADS threads owns a duplicate of MPI_COMM_WORLD and runs a mix of
 * MPI_Allreduce, MPI_Reduce and MPI_Iallreduce on it (short and long vectors,
 * a non-commutative user operation) while the others do the same on theirs.
 * Each thread checks its results against values computed locally; rank 0
 * prints one line per thread. The output is the same with or without an
 * interposer.
 */
#include <mpi.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 3, ROUNDS = 300, LONG = 20000 };

static int rank, size;
static MPI_Comm comms[THREADS];
static int failures[THREADS];
static MPI_Op opFirst;

/* Not commutative: the left operand wins, so the result is rank 0's value. */
static void first(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  memcpy(inout, in, sizeof(int) * (size_t)*len);
}

static void *worker(void *arg) {
  const int t = (int)(long)arg;
  MPI_Comm c = comms[t];
  int *in = malloc(sizeof(int) * LONG), *out = malloc(sizeof(int) * LONG);
  for (int round = 0; round < ROUNDS; ++round) {
    const int n = round % 10 == 0 ? LONG : 1 + round % 17;
    for (int i = 0; i < n; ++i)
      in[i] = rank * (t + 1) + i + round;
    const int sumRanks = size * (size - 1) / 2;
    switch (round % 4) {
    case 0:
      MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, c);
      for (int i = 0; i < n; ++i)
        failures[t] += out[i] != sumRanks * (t + 1) + size * (i + round);
      break;
    case 1: {
      MPI_Request r;
      MPI_Iallreduce(in, out, n, MPI_INT, MPI_MAX, c, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      for (int i = 0; i < n; ++i)
        failures[t] += out[i] != (size - 1) * (t + 1) + i + round;
      break;
    }
    case 2: {
      const int root = round % size;
      MPI_Reduce(in, out, n, MPI_INT, MPI_SUM, root, c);
      if (rank == root)
        for (int i = 0; i < n; ++i)
          failures[t] += out[i] != sumRanks * (t + 1) + size * (i + round);
      break;
    }
    case 3:
      MPI_Allreduce(in, out, n, MPI_INT, opFirst, c);
      for (int i = 0; i < n; ++i)
        failures[t] += out[i] != i + round;
      break;
    }
  }
  free(in);
  free(out);
  return NULL;
}

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0)
      printf("threads: MPI_THREAD_MULTIPLE not provided; skipped\n");
    MPI_Finalize();
    return 0;
  }
  MPI_Op_create(first, 0, &opFirst);
  for (int t = 0; t < THREADS; ++t)
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
  pthread_t th[THREADS];
  for (int t = 0; t < THREADS; ++t)
    pthread_create(&th[t], NULL, worker, (void *)(long)t);
  for (int t = 0; t < THREADS; ++t)
    pthread_join(th[t], NULL);
  int all[THREADS];
  MPI_Reduce(failures, all, THREADS, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    for (int t = 0; t < THREADS; ++t)
      printf("thread %d: %d rounds on its own communicator, %s\n", t, ROUNDS,
             all[t] ? "WRONG RESULTS" : "all results right");
  for (int t = 0; t < THREADS; ++t)
    MPI_Comm_free(&comms[t]);
  MPI_Op_free(&opFirst);
  MPI_Finalize();
  return 0;
}
