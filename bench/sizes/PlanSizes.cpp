// bench/sizes/PlanSizes.cpp: `collc-plan-sizes` — bytecode size of every
// registered allreduce algorithm at p = 8, 64, 512.
//
// Prints one row per (algorithm, p): ops, .cplan bytes (header, offset table
// and checksum included), bytes per op, and the time the validating loader
// takes for the whole file (all ranks; best of 5) — for the plan as generated
// (-O0) and as `collc compile` writes it by default (-O2, whose exact
// dependency lists cost more bytes than step barriers). The format's goal is at most 6
// bytes per op on average at p = 64 (MSCCL's XML spends ~130 per step).
// An algorithm whose `require` lines refuse p gets a row saying so; progress
// (each algorithm and p as it starts) goes to stderr, since p = 512 takes
// minutes.
// Usage: collc-plan-sizes [P...]   (default 8 64 512)
#include "compiler/Lower.h"
#include "compiler/passes/Pipeline.h"
#include "runtime/bytecode/Loader.h"
#include "schedules/Generators.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

using namespace collc;

namespace {
/// Best-of-5 time of loading `bytes`, in microseconds (-1 if refused).
double loadMicros(const std::vector<uint8_t> &bytes) {
  double best = 1e300;
  for (int i = 0; i < 5; ++i) {
    rt::LoadedPlan plan;
    auto t0 = std::chrono::steady_clock::now();
    rt::Status s = rt::load(bytes, plan);
    auto t1 = std::chrono::steady_clock::now();
    if (!s.ok())
      return -1;
    best = std::min(best, std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  return best;
}
} // namespace

int main(int argc, char **argv) {
  std::vector<uint32_t> sizes;
  for (int i = 1; i < argc; ++i) {
    char *end = nullptr;
    const unsigned long p = std::strtoul(argv[i], &end, 10);
    if (*argv[i] == '\0' || *end != '\0' || p < 1 || p > 4096) {
      llvm::errs() << "usage: collc-plan-sizes [P...]  (1 <= P <= 4096; default 8 64 512)\n";
      return 2;
    }
    sizes.push_back(static_cast<uint32_t>(p));
  }
  if (sizes.empty())
    sizes = {8, 64, 512};

  llvm::raw_ostream &os = llvm::outs();
  os << llvm::formatv("{0,-20} {1,5} {2,9} {3,10} {4,8} {5,10} | {6,9} {7,10} {8,8} {9,10}\n",
                      "algorithm", "p", "ops", "bytes", "bytes/op", "load-us", "-O2 ops",
                      "bytes", "bytes/op", "load-us");
  for (const sched::Algorithm &a : sched::algorithms()) {
    if (a.collective != ir::Collective::Allreduce)
      continue;
    for (uint32_t p : sizes) {
      sched::GenOptions opts;
      opts.ranks = p;
      if (!a.accepts(opts)) {
        os << llvm::formatv("{0,-20} {1,5} not defined at this p (the algorithm's `require`)\n",
                            a.name, p);
        continue;
      }
      llvm::errs() << "collc-plan-sizes: " << a.name << " p=" << p << " ...\n";
      llvm::Expected<ir::Plan> plan = sched::generate(a.collective, a.name, opts);
      if (!plan) {
        llvm::errs() << "collc-plan-sizes: " << a.name << " p=" << p << ": "
                     << llvm::toString(plan.takeError()) << '\n';
        return 1;
      }
      const size_t ops = plan->numOps();
      const std::vector<uint8_t> code = compiler::lower(*plan);
      const size_t bytes = code.size();
      compiler::PipelineOptions o2;
      o2.level = 2;
      o2.verifyEach = false; // the tests prove -O2 plans; here only sizes matter
      llvm::Expected<ir::Plan> opt = compiler::optimize(*plan, o2);
      if (!opt) {
        llvm::errs() << "collc-plan-sizes: " << a.name << " p=" << p << " -O2: "
                     << llvm::toString(opt.takeError()) << '\n';
        return 1;
      }
      const size_t optOps = opt->numOps();
      const std::vector<uint8_t> optCode = compiler::lower(*opt);
      os << llvm::formatv("{0,-20} {1,5} {2,9} {3,10} {4,8:F2} {5,10:F0} | {6,9} {7,10} {8,8:F2} "
                          "{9,10:F0}\n",
                          a.name, p, ops, bytes, ops ? double(bytes) / double(ops) : 0.0,
                          loadMicros(code), optOps, optCode.size(),
                          optOps ? double(optCode.size()) / double(optOps) : 0.0,
                          loadMicros(optCode));
    }
  }
  return 0;
}
