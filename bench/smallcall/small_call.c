/* bench/smallcall/small_call.c: one 8-byte double-sum allreduce on 2 ranks,
 * many times, three ways, to see what collc adds to a small call.
 *
 *   mpirun -np 2 collc-small-call PLAN.cplan native|raw|collc [ITERS]
 *
 * native: MPI_Allreduce. raw: what a 2-rank recursive-doubling plan asks of
 * MPI (MPI_Irecv + MPI_Isend + MPI_Waitsome, then the sum), with no collc
 * code. collc: collc_allreduce with PLAN (compile it for 2 ranks). flag: the
 * floor of this measurement — each rank writes its value and a sequence
 * number into one cache line of a shared mapping and spins on the other's
 * (no library at all), so what remains is the barrier's skew between the
 * ranks and one cache-line transfer. Each call
 * is bracketed by MPI_Barrier; prints the median over ITERS (default 20000)
 * of the slower rank's time. Run rank 0 under callgrind to count
 * instructions per call (docs/performance.md, "Runtime"). */
#include <collc/collc.h>
#include <mpi.h>

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int compareDoubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3 || size != 2 ||
      (strcmp(argv[2], "native") && strcmp(argv[2], "raw") && strcmp(argv[2], "collc") &&
       strcmp(argv[2], "flag"))) {
    if (rank == 0)
      fprintf(stderr,
              "usage: mpirun -np 2 collc-small-call PLAN.cplan native|raw|collc|flag [ITERS]\n");
    MPI_Finalize();
    return 2;
  }
  const int way = !strcmp(argv[2], "native") ? 0
                  : !strcmp(argv[2], "raw")  ? 1
                  : !strcmp(argv[2], "flag") ? 3
                                             : 2;
  const int iters = argc > 3 ? atoi(argv[3]) : 20000;
  collc_plan plan = COLLC_PLAN_NULL;
  if (way == 2 && collc_plan_load_file(argv[1], &plan) != COLLC_SUCCESS) {
    fprintf(stderr, "collc-small-call: %s\n", collc_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (iters < 1)
    MPI_Abort(MPI_COMM_WORLD, 2);
  MPI_Comm dup; /* the raw exchange, like collc, on a communicator of its own */
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  const int peer = 1 - rank;
  /* flag: two cache lines of a mapping rank 0 makes, one per rank */
  char *lines = NULL;
  if (way == 3) {
    char name[64];
    snprintf(name, sizeof name, "/collc-small-call-%ld", (long)getpid());
    MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
    int fd = shm_open(name, rank == 0 ? O_CREAT | O_RDWR : O_RDWR, 0600);
    if (rank == 0 && (fd < 0 || ftruncate(fd, 4096) != 0))
      MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0)
      fd = shm_open(name, O_RDWR, 0600);
    lines = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (lines == MAP_FAILED)
      MPI_Abort(MPI_COMM_WORLD, 2);
    close(fd);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
      shm_unlink(name);
  }
  long seq = 0;
  double in = rank + 1, out = 0, tmp = 0;
  double *t = malloc(sizeof(double) * (size_t)iters);
  for (int it = -1000; it < iters; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (way == 0) {
      MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    } else if (way == 1) {
      MPI_Request rq[2];
      int idx[2], done, left = 2;
      MPI_Irecv(&tmp, 1, MPI_DOUBLE, peer, 0, dup, &rq[0]);
      MPI_Isend(&in, 1, MPI_DOUBLE, peer, 0, dup, &rq[1]);
      while (left) {
        MPI_Waitsome(2, rq, &done, idx, MPI_STATUSES_IGNORE);
        left -= done;
      }
      out = in + tmp;
    } else if (way == 3) {
      _Atomic long *mine = (_Atomic long *)(lines + 64 * rank);
      _Atomic long *theirs = (_Atomic long *)(lines + 64 * peer);
      ++seq;
      memcpy((char *)mine + 8, &in, sizeof in);
      atomic_store_explicit(mine, seq, memory_order_release);
      while (atomic_load_explicit(theirs, memory_order_acquire) != seq)
        ;
      memcpy(&tmp, (char *)theirs + 8, sizeof tmp);
      out = rank == 0 ? in + tmp : tmp + in;
    } else if (collc_allreduce(plan, &in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) !=
               COLLC_SUCCESS) {
      fprintf(stderr, "collc-small-call: %s\n", collc_error_message());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (it >= 0)
      t[it] = MPI_Wtime() - t0;
  }
  if (out != 3.0) {
    fprintf(stderr, "collc-small-call: wrong sum %g\n", out);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Reduce(rank ? t : MPI_IN_PLACE, t, iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    qsort(t, (size_t)iters, sizeof(double), compareDoubles);
    printf("%s: median %.3f us over %d calls\n", argv[2], t[iters / 2] * 1e6, iters);
  }
  free(t);
  if (lines)
    munmap(lines, 4096);
  MPI_Comm_free(&dup);
  if (plan != COLLC_PLAN_NULL)
    collc_plan_free(&plan);
  MPI_Finalize();
  return 0;
}
