/* bench/cma/cma_probe.c: process_vm_readv (CMA) from a forked child's buffer
 * against memcpy of the same buffer, at 1, 8 and 64 MiB; prints the best
 * bandwidth of each over repeated copies (200, 40, 8) and their ratio.
 * Usage: collc-cma-probe. Linux only; the parent reads its own child, which
 * ptrace's default policy allows. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Best seconds of `reps` reads of n bytes at `src` in process `child`, and
 * of `reps` memcpy of the same bytes; 0 on success. */
static int measure(pid_t child, char *src, char *dst, size_t n, int reps, double *cma,
                   double *copy) {
  *cma = *copy = 1e30;
  for (int r = 0; r < reps; ++r) {
    struct iovec local = {dst, n}, remote = {src, n};
    double t = now();
    const ssize_t got = process_vm_readv(child, &local, 1, &remote, 1, 0);
    t = now() - t;
    if (got != (ssize_t)n) {
      perror("process_vm_readv");
      return 1;
    }
    if (t < *cma)
      *cma = t;
    t = now();
    memcpy(dst, src, n);
    t = now() - t;
    if (t < *copy)
      *copy = t;
  }
  return 0;
}

int main(void) {
  const size_t sizes[] = {(size_t)1 << 20, (size_t)8 << 20, (size_t)64 << 20};
  const int reps[] = {200, 40, 8};
  printf("%10s %14s %14s %12s\n", "bytes", "CMA GB/s", "memcpy GB/s", "CMA/memcpy");
  for (int k = 0; k < 3; ++k) {
    const size_t n = sizes[k];
    /* Shared, so the child's copy is the same pages, written before the fork. */
    char *src = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *dst = malloc(n);
    int done[2];
    if (src == MAP_FAILED || !dst || pipe(done) != 0) {
      perror("setup");
      return 1;
    }
    memset(src, 1, n);
    memset(dst, 0, n);
    const pid_t child = fork();
    if (child == 0) { /* keeps src mapped until the parent is done */
      char c;
      close(done[1]);
      _exit(read(done[0], &c, 1) < 0);
    }
    close(done[0]);
    double cma = 0, copy = 0;
    const int rc = child < 0 ? 1 : measure(child, src, dst, n, reps[k], &cma, &copy);
    close(done[1]);
    if (child > 0)
      waitpid(child, NULL, 0);
    if (rc)
      return 1;
    printf("%10zu %14.1f %14.1f %12.2f\n", n, (double)n / cma / 1e9, (double)n / copy / 1e9,
           copy / cma);
    munmap(src, n);
    free(dst);
  }
  return 0;
}
