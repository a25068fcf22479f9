// bench/firstcall/FirstCallBench.cpp: the drop-in's first-call cost per rank against p.
//
// Usage: collc-firstcall-bench [--quick] [--runs N] [--algorithm NAME] [--ranks P]
// For each algorithm and p, and a few ranks of it, calls the path a
// communicator's first call takes in libcollc_mpi.so for one rank, without
// launching p processes: PlanLibrary::build (instantiate the rank's program
// and its peers', optimize, lower the partial plan), then rt::load (the
// validating loader, as collc_plan_load_memory) and rt::prepareRank (what
// the first execution prepares). Each cell is the median CPU time of --runs
// runs (default 5) of a fresh library, in ms; the load average is printed
// with the table. The last column is the whole-plan path the drop-in took
// before (and takes with COLLC_VERIFY=1: generate, prove, optimize with
// every pass proven, lower, load, prepare), for p up to 1024 (--quick: 256).
// --quick: p = 64 and 1024 only. --algorithm NAME: only the rows of that
// algorithm (for example ring); --ranks P: only that p (for profiling one cell).
#include "dropin/PlanLibrary.h"
#include "dropin/RankCompile.h"

#include "runtime/bytecode/Loader.h"
#include "runtime/core/Prepared.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

using namespace collc;
using namespace collc::dropin;

namespace {

double cpuNow() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Case {
  Coll c;
  const char *name;
};

struct Cost {
  double build = 0, load = 0, prepare = 0;
  uint64_t own = 0, context = 0;
  uint32_t sections = 0;
  size_t bytes = 0;
  bool ok = false;
  std::string error;
};

/// One run of the first-call path for `rank`, with a fresh library.
Cost firstCall(const Case &k, uint32_t p, uint32_t rank, bool whole) {
  Cost cost;
  PlanLibrary lib;
  Config config;
  config.verify = whole;
  std::vector<std::string> warnings;
  BuiltPlan b;
  const double t0 = cpuNow();
  if (!lib.build(k.c, k.name, p, 0, rank, config, b, cost.error, warnings))
    return cost;
  const double t1 = cpuNow();
  rt::LoadedPlan loaded;
  rt::Status s = rt::load(*b.bytes, loaded);
  const double t2 = cpuNow();
  if (!s.ok()) {
    cost.error = s.message();
    return cost;
  }
  const rt::PreparedRank prep = rt::prepareRank(loaded, rank);
  const double t3 = cpuNow();
  cost.ok = !prep.unknownTmp;
  cost.build = t1 - t0;
  cost.load = t2 - t1;
  cost.prepare = t3 - t2;
  cost.own = b.ownOps;
  cost.context = b.contextOps;
  cost.sections = b.sections;
  cost.bytes = b.bytes->size();
  return cost;
}

std::string ms(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 0.01 ? "%.4f" : s < 1 ? "%.3f" : "%.1f", s * 1e3);
  return buf;
}

} // namespace

int main(int argc, char **argv) {
  bool quick = false;
  int runs = 5;
  std::string only;
  uint32_t onlyP = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--algorithm") && i + 1 < argc)
      only = argv[++i];
    else if (!std::strcmp(argv[i], "--ranks") && i + 1 < argc &&
             std::strtoul(argv[i + 1], nullptr, 10) > 0)
      onlyP = uint32_t(std::strtoul(argv[++i], nullptr, 10));
    else {
      std::fprintf(stderr, "usage: collc-firstcall-bench [--quick] [--runs N] "
                           "[--algorithm NAME] [--ranks P]\n");
      return 2;
    }
  }
  const Case cases[] = {
      {Coll::Allreduce, "rabenseifner"}, {Coll::Allreduce, "recursive_doubling"},
      {Coll::Allreduce, "ring"},         {Coll::Allreduce, "binary_tree"},
      {Coll::Reduce, "binomial"},        {Coll::Reduce, "rabenseifner"},
      {Coll::Bcast, "binomial"},         {Coll::Allgather, "bruck"},
  };
  std::vector<uint32_t> ps = quick ? std::vector<uint32_t>{64, 1024}
                                   : std::vector<uint32_t>{64, 1024, 4096, 65536};
  if (onlyP)
    ps = {onlyP};
  const uint32_t wholeUpTo = quick ? 256 : 1024;
  if (FILE *f = std::fopen("/proc/loadavg", "r")) {
    char buf[64] = {};
    if (std::fgets(buf, sizeof buf, f))
      std::printf("# load average: %s", buf);
    std::fclose(f);
  }
  std::printf("# CPU ms per rank, median of %d runs; build = instantiate + optimize + lower "
              "(PlanLibrary::build), load = validating loader, prepare = rt::prepareRank\n",
              runs);
  std::printf("%-22s %6s %6s %8s %9s %4s %8s %9s %8s %8s %9s %10s\n", "algorithm", "p", "rank",
              "own-ops", "ctx-ops", "sec", "bytes", "build", "load", "prepare", "first-call",
              "whole-plan");
  for (const Case &k : cases) {
    if (!only.empty() && only != k.name)
      continue;
    for (uint32_t p : ps) {
      for (uint32_t rank : {0u, p / 2 + 1, p - 1}) {
        // Ring at p = 65536: one run (each takes seconds; see docs/performance.md).
        const int n = std::string(k.name) == "ring" && p > 4096 ? 1 : runs;
        std::vector<double> build, load, prepare, total, whole;
        Cost last;
        for (int i = 0; i < n; ++i) {
          last = firstCall(k, p, rank, false);
          if (!last.ok)
            break;
          build.push_back(last.build);
          load.push_back(last.load);
          prepare.push_back(last.prepare);
          total.push_back(last.build + last.load + last.prepare);
        }
        if (!last.ok) {
          std::printf("%-22s %6u %6u  refused: %s\n",
                      (std::string(name(k.c)) + " " + k.name).c_str(), p, rank,
                      last.error.c_str());
          break;
        }
        std::string wholeCell = "-";
        if (p <= wholeUpTo && rank == 0) {
          for (int i = 0; i < std::min(n, 3); ++i) {
            Cost w = firstCall(k, p, rank, true);
            if (w.ok)
              whole.push_back(w.build + w.load + w.prepare);
          }
          wholeCell = whole.empty() ? "refused" : ms(median(whole));
        }
        std::printf("%-22s %6u %6u %8llu %9llu %4u %8zu %9s %8s %8s %9s %10s\n",
                    (std::string(name(k.c)) + " " + k.name).c_str(), p, rank,
                    (unsigned long long)last.own, (unsigned long long)last.context,
                    last.sections, last.bytes, ms(median(build)).c_str(),
                    ms(median(load)).c_str(), ms(median(prepare)).c_str(),
                    ms(median(total)).c_str(), wholeCell.c_str());
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
