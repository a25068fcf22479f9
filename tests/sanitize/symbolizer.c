/* tests/sanitize/symbolizer.c: the symbolizer the sanitizers start in the MPI
 * runs of scripts/sanitize (external_symbolizer_path), which build it as a
 * static program named llvm-symbolizer. Sanitizers start their symbolizer
 * with the program's environment, LD_PRELOAD included, and an instrumented
 * libcollc_mpi.so cannot load into an uninstrumented process — nor into a
 * shell script's shell. A static program ignores LD_PRELOAD: this one drops
 * it and runs the real llvm-symbolizer. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  (void)argc;
  unsetenv("LD_PRELOAD");
  argv[0] = (char *)"llvm-symbolizer-14";
  execvp(argv[0], argv);
  perror("llvm-symbolizer-14");
  return 127;
}
