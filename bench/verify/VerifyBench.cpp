// bench/verify/VerifyBench.cpp: time and peak memory of generate + verify.
//
// Usage: collc-verify-bench [--quick] [ALGORITHM ...]
// Runs each (algorithm, p) in a child process so that its peak resident set
// size is its own, and prints one table row per run: generation time,
// verification time, ops, and peak RSS. Default: the five allreduce
// generators at p = 64, 512, 4096 (ring up to 1024). A run the generator
// refuses (the algorithm's `require`, or a plan over the generator's op
// limit) gets a row saying why; a child that dies says how.
#include "compiler/Verifier.h"
#include "schedules/Generators.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace collc;

namespace {

struct Row {
  double genMs = 0, verifyMs = 0;
  uint64_t ops = 0;
  int proven = 0;
  char refused[240] = {}; ///< why the generator refused, or empty
};

Row measure(const sched::Algorithm &a, uint32_t p) {
  using Clock = std::chrono::steady_clock;
  Row row;
  sched::GenOptions o;
  o.ranks = p;
  auto t0 = Clock::now();
  llvm::Expected<ir::Plan> plan = sched::generate(a.collective, a.name, o);
  auto t1 = Clock::now();
  if (!plan) {
    const std::string why = llvm::toString(plan.takeError());
    std::snprintf(row.refused, sizeof row.refused, "%s", why.c_str());
    return row;
  }
  compiler::VerifyResult r = compiler::verify(*plan);
  auto t2 = Clock::now();
  row.genMs = std::chrono::duration<double, std::milli>(t1 - t0).count();
  row.verifyMs = std::chrono::duration<double, std::milli>(t2 - t1).count();
  row.ops = plan->numOps();
  row.proven = r.proven();
  return row;
}

/// How a child that wrote no row ended, in words.
std::string childEnd(int status) {
  if (WIFSIGNALED(status))
    return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) +
           (WTERMSIG(status) == SIGKILL ? " (out of memory?)" : "");
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended abnormally";
}

} // namespace

int main(int argc, char **argv) {
  bool quick = false;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--help")) {
      llvm::outs() << "usage: collc-verify-bench [--quick] [ALGORITHM ...]\n"
                      "  times generate + verify of the allreduce generators at p = 64, "
                      "512, 4096\n  (ring to 1024); --quick: p = 64 and 512 only\n";
      return 0;
    } else
      only.push_back(argv[i]);
  }
  llvm::outs() << llvm::formatv("{0,-20} {1,6} {2,10} {3,10} {4,11} {5,9} {6,7}\n",
                                "algorithm", "p", "ops", "gen ms", "verify ms", "peak MB",
                                "proven");
  for (const sched::Algorithm &a : sched::algorithms()) {
    if (a.collective != ir::Collective::Allreduce)
      continue;
    if (!only.empty() && std::find(only.begin(), only.end(), a.name.str()) == only.end())
      continue;
    for (uint32_t p : {64u, 512u, 1024u, 4096u}) {
      bool ring = a.name == "ring";
      if ((ring && p > 1024) || (!ring && p == 1024) || (quick && p > 512))
        continue;
      sched::GenOptions shape;
      shape.ranks = p;
      if (!a.accepts(shape)) {
        llvm::outs() << llvm::formatv("{0,-20} {1,6} not defined at this p (the algorithm's "
                                      "`require`)\n",
                                      a.name, p);
        continue;
      }
      llvm::errs() << "collc-verify-bench: " << a.name << " p=" << p << " ...\n";
      int fds[2];
      if (pipe(fds) != 0) {
        llvm::errs() << "collc-verify-bench: pipe: " << std::strerror(errno) << '\n';
        return 1;
      }
      llvm::outs().flush();
      pid_t pid = fork();
      if (pid == 0) {
        close(fds[0]);
        Row row = measure(a, p);
        ssize_t n = write(fds[1], &row, sizeof row);
        _exit(n == sizeof row ? 0 : 1);
      }
      close(fds[1]);
      Row row;
      ssize_t got = read(fds[0], &row, sizeof row);
      close(fds[0]);
      int status = 0;
      struct rusage ru {};
      wait4(pid, &status, 0, &ru);
      if (got != sizeof row) {
        llvm::outs() << llvm::formatv("{0,-20} {1,6} the run's process {2}\n", a.name, p,
                                      childEnd(status));
        continue;
      }
      if (row.refused[0]) {
        llvm::outs() << llvm::formatv("{0,-20} {1,6} refused: {2}\n", a.name, p, row.refused);
        continue;
      }
      llvm::outs() << llvm::formatv("{0,-20} {1,6} {2,10} {3,10:f1} {4,11:f1} {5,9:f1} {6,7}\n",
                                    a.name, p, row.ops, row.genMs, row.verifyMs,
                                    ru.ru_maxrss / 1024.0, row.proven ? "yes" : "NO");
    }
  }
  return 0;
}
