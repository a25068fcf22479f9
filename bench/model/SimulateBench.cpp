// bench/model/SimulateBench.cpp: collc-simulate-bench — how long simulating a
// plan takes at scale, and its memory per op.
//
// For rabenseifner allreduce at p = 4096 and 65536 (and a few smaller p for
// the trend), on a cluster of 32-rank nodes with one shared NIC each (a
// topology built to fit p): the ops, the time to instantiate the plan, the
// time to simulate it (critical path included), and the growth of the
// process's peak resident memory across the simulation per op. Usage:
//   collc-simulate-bench [P...]   (default: 1024 4096 16384 65536)
#include "model/Simulator.h"
#include "schedules/Generators.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

using namespace collc;

namespace {

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

long peakKiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

model::Topology clusterFor(uint32_t p) {
  model::Topology t;
  t.name = "bench-cluster";
  t.levels.push_back({"node", 32, 0.4e-6, 1 / 8e9, 1});
  t.levels.push_back({"network", (p + 31) / 32, 1.8e-6, 1 / 12.5e9, 32});
  t.gamma = 1 / 4e9;
  t.copyBeta = 1 / 10e9;
  return t;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<uint32_t> ps;
  for (int i = 1; i < argc; ++i)
    ps.push_back(static_cast<uint32_t>(std::strtoul(argv[i], nullptr, 10)));
  if (ps.empty())
    ps = {1024, 4096, 16384, 65536};
  std::printf("# collc-simulate-bench: rabenseifner allreduce, 1 MiB of doubles, nodes of 32 "
              "ranks sharing one NIC\n");
  std::printf("%8s %10s %14s %12s %12s %14s %14s %12s\n", "ranks", "ops", "instantiate_s",
              "simulate_s", "sim_cpu_s", "predicted_us", "peak_rss_MiB", "sim_B/op");
  for (uint32_t p : ps) {
    sched::GenOptions o;
    o.ranks = p;
    o.maxOps = uint64_t(1) << 31;
    auto t0 = std::chrono::steady_clock::now();
    llvm::Expected<ir::Plan> plan = sched::generate(ir::Collective::Allreduce, "rabenseifner", o);
    if (!plan) {
      std::fprintf(stderr, "%s\n", llvm::toString(plan.takeError()).c_str());
      return 1;
    }
    const double inst = seconds(t0);
    model::Topology topo = clusterFor(p);
    llvm::Expected<model::Placement> pl = model::place(topo, p);
    if (!pl) {
      std::fprintf(stderr, "%s\n", llvm::toString(pl.takeError()).c_str());
      return 1;
    }
    model::SimOptions so;
    so.bytes = 1 << 20;
    so.gamma = topo.gamma;
    const long before = peakKiB();
    t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    llvm::Expected<model::SimResult> r = model::simulate(*plan, topo, *pl, so);
    const double sim = seconds(t0);
    const double simCpu = double(std::clock() - c0) / CLOCKS_PER_SEC;
    if (!r) {
      std::fprintf(stderr, "%s\n", llvm::toString(r.takeError()).c_str());
      return 1;
    }
    const long after = peakKiB();
    const size_t ops = plan->numOps();
    std::printf("%8u %10zu %14.3f %12.3f %12.3f %14.3f %14.1f %12.1f\n", p, ops, inst, sim,
                simCpu, r->time * 1e6, after / 1024.0,
                ops ? double(after - before) * 1024 / double(ops) : 0.0);
    std::fflush(stdout);
  }
  return 0;
}
