// bench/lang/InstantiateBench.cpp: instantiation time of the library against the C++ generators.
//
// Usage: collc-instantiate-bench [--runs N]
// For each of the eight algorithms the language replaced, at p = 64, 512 and
// 4096 (ring: up to 1024), prints the median of N runs (default 7) of the
// retired C++ generator (tests/oracle) and of instantiating the library file
// (schedules/*.calgo, already parsed, as the registry holds it), run
// alternately so both see the same machine load, and their ratio; then one rank alone (per-rank instantiation) at p = 4096 and
// p = 100000 — the cost a runtime at that scale pays for its own program.
#include "lang/Instantiator.h"
#include "schedules/Generators.h"
#include "tests/oracle/Oracle.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace collc;

namespace {

template <typename F> double timeMs(F &&f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename F> double medianMs(unsigned runs, F &&f) {
  std::vector<double> ms;
  for (unsigned i = 0; i < runs; ++i)
    ms.push_back(timeMs(f));
  return median(ms);
}

/// Medians of `runs` alternating runs of a and b (so both see the same load).
template <typename A, typename B>
std::pair<double, double> medianPairMs(unsigned runs, A &&a, B &&b) {
  std::vector<double> ta, tb;
  for (unsigned i = 0; i < runs; ++i) {
    ta.push_back(timeMs(a));
    tb.push_back(timeMs(b));
  }
  return {median(ta), median(tb)};
}

} // namespace

int main(int argc, char **argv) {
  unsigned runs = 7;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = unsigned(std::max(1, std::atoi(argv[++i])));
    } else {
      llvm::errs() << "usage: collc-instantiate-bench [--runs N]\n";
      return 2;
    }
  }
  llvm::raw_ostream &os = llvm::outs();
  os << llvm::formatv("{0,-10} {1,-20} {2,6} {3,9} {4,11} {5,11} {6,7}\n", "collective",
                      "algorithm", "p", "ops", "c++ ms", "calgo ms", "ratio");
  for (const oracle::Generator &g : oracle::generators()) {
    const sched::Algorithm *a = sched::findAlgorithm(g.collective, g.name);
    for (uint32_t p : {64u, 512u, 4096u}) {
      if (g.name == "ring" && p > 1024)
        continue;
      const uint32_t root = ir::hasRoot(g.collective) ? p / 2 : 0;
      size_t ops = 0;
      const auto [cpp, calgo] = medianPairMs(
          runs, [&] { ops = g.build({p, root}).numOps(); },
          [&] { ops = a->build({p, root}).numOps(); });
      os << llvm::formatv("{0,-10} {1,-20} {2,6} {3,9} {4,11:F2} {5,11:F2} {6,7:F2}\n",
                          ir::name(g.collective), g.name, p, ops, cpp, calgo, calgo / cpp);
    }
  }
  os << "\none rank alone (lang::instantiateRank), median of " << runs << " runs:\n";
  os << llvm::formatv("{0,-10} {1,-20} {2,6} {3,9} {4,11}\n", "collective", "algorithm", "p",
                      "ops", "ms");
  for (const sched::Algorithm &a : sched::algorithms())
    for (uint32_t p : {4096u, 100000u}) {
      lang::InstantiateOptions o;
      o.ranks = p;
      o.root = ir::hasRoot(a.collective) ? p / 2 : 0;
      if (!*lang::accepts(*a.module, o) || (a.name == "ring" || a.name == "chain" ||
                                            a.name == "swing_bandwidth"))
        continue; // refused p, or O(p) ops per rank by design
      size_t ops = 0;
      const double ms = medianMs(runs, [&] {
        ops = lang::instantiateRank(*a.module, o, p - 1)->ops.size();
      });
      os << llvm::formatv("{0,-10} {1,-20} {2,6} {3,9} {4,11:F4}\n", ir::name(a.collective),
                          a.name, p, ops, ms);
    }
  return 0;
}
