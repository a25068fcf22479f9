// bench/opt/OptEffect.cpp: `collc-opt-effect` — what -O2 does to the allreduce algorithms.
//
// Prints one markdown row per (algorithm, p): ops, messages, scratch slots
// and critical path (the verifier's: longest chain of dependent ops, a
// message counting once) at -O0 and at -O2, and the time -O2 takes with
// verification after every pass (best of 3). Every -O2 plan is proven (the
// pipeline verifies it; a failure ends the program with its message). An
// algorithm whose `require` lines refuse p (swing_latency at p = 13) gets a
// row saying so. Progress goes to stderr.
// Usage: collc-opt-effect [--segments K] [P...]   (default p = 13 64; K = 0: no pipelining)
#include "compiler/Verifier.h"
#include "compiler/passes/Pipeline.h"
#include "schedules/Generators.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace collc;

int main(int argc, char **argv) {
  std::vector<uint32_t> ranks;
  unsigned segments = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--segments") == 0 && i + 1 < argc) {
      segments = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
      continue;
    }
    char *end = nullptr;
    const unsigned long p = std::strtoul(argv[i], &end, 10);
    if (*argv[i] == '\0' || *end != '\0' || p < 1 || p > 4096) {
      llvm::errs() << "usage: collc-opt-effect [--segments K] [P...]  (1 <= P <= 4096)\n";
      return 2;
    }
    ranks.push_back(static_cast<uint32_t>(p));
  }
  if (ranks.empty())
    ranks = {13, 64};

  llvm::raw_ostream &os = llvm::outs();
  os << "| algorithm | p | ops -O0 | ops -O2 | messages -O0 | messages -O2 | scratch -O0 | "
        "scratch -O2 | critical path -O0 | critical path -O2 | -O2 time (ms) |\n";
  os << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const sched::Algorithm &a : sched::algorithms()) {
    if (a.collective != ir::Collective::Allreduce)
      continue;
    for (uint32_t p : ranks) {
      sched::GenOptions g;
      g.ranks = p;
      if (!a.accepts(g)) {
        os << llvm::formatv("| {0} | {1} | not defined at p = {1} (the algorithm's `require`) "
                            "|||||||||\n",
                            a.name, p);
        continue;
      }
      llvm::errs() << "collc-opt-effect: " << a.name << " p=" << p << " ...\n";
      const ir::Plan plan = a.build(g);
      const compiler::PlanStats s0 = compiler::verify(plan).stats;
      compiler::PipelineOptions opts;
      opts.level = 2;
      opts.pipelineSegments = segments;
      ir::Plan best;
      double ms = 1e300;
      for (int rep = 0; rep < 3; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        llvm::Expected<ir::Plan> opt = compiler::optimize(plan, opts);
        auto t1 = std::chrono::steady_clock::now();
        if (!opt) {
          llvm::errs() << a.name << " p=" << p << ": " << llvm::toString(opt.takeError())
                       << '\n';
          return 1;
        }
        ms = std::min(ms, std::chrono::duration<double, std::milli>(t1 - t0).count());
        best = std::move(*opt);
      }
      const compiler::PlanStats s2 = compiler::verify(best).stats;
      os << llvm::formatv("| {0} | {1} | {2} | {3} | {4} | {5} | {6} | {7} | {8} | {9} | {10:F1} |\n",
                          a.name, p, s0.ops, s2.ops, s0.messages, s2.messages, s0.scratch,
                          s2.scratch, s0.criticalPath, s2.criticalPath, ms);
    }
  }
  return 0;
}
