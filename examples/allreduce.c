/* examples/allreduce.c: running a compiled plan through the C API.
 *
 *   collc gen rabenseifner --ranks 4 | collc compile - -o r4.cplan
 *   mpirun -np 4 build/bin/collc-example-allreduce r4.cplan
 *
 * Loads the plan, sums a vector of doubles with it (blocking, then with a
 * persistent request started three times), compares each result with
 * MPI_Allreduce, and prints "ok" on rank 0. A plan made for another number
 * of ranks, or a call it cannot serve, is reported with collc_strerror and
 * collc_error_message. */
#include <collc/collc.h>
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

enum { N = 1000 };

static int check(int rc, const char *what) {
  if (rc != COLLC_SUCCESS) {
    fprintf(stderr, "%s: %s: %s\n", what, collc_strerror(rc), collc_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return rc;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 2) {
    if (rank == 0)
      fprintf(stderr, "usage: mpirun -np P collc-example-allreduce PLAN.cplan\n");
    MPI_Finalize();
    return 2;
  }
  collc_plan plan;
  check(collc_plan_load_file(argv[1], &plan), "collc_plan_load_file");

  static double in[N], out[N], want[N];
  for (int i = 0; i < N; ++i)
    in[i] = rank + 0.5 * i; /* sums exactly in any order */
  MPI_Allreduce(in, want, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

  int bad = 0;
  check(collc_allreduce(plan, in, out, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
        "collc_allreduce");
  for (int i = 0; i < N; ++i)
    bad += out[i] != want[i];

  collc_request req;
  check(collc_allreduce_init(plan, in, out, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req),
        "collc_allreduce_init");
  for (int k = 0; k < 3; ++k) {
    check(collc_start(req), "collc_start");
    check(collc_wait(&req), "collc_wait");
    for (int i = 0; i < N; ++i)
      bad += out[i] != want[i];
  }
  check(collc_request_free(&req), "collc_request_free");
  check(collc_plan_free(&plan), "collc_plan_free");

  int total = 0;
  MPI_Reduce(&bad, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0 && total)
    printf("wrong: %d elements differ\n", total);
  else if (rank == 0)
    printf("ok\n");
  MPI_Finalize();
  return total != 0;
}
