// tests/model/ClosedFormTest.cpp: on a uniform, contention-free topology with
// free copies the simulator reproduces the α-β-γ cost of every algorithm
// file's cost comment exactly (to rounding), for p = 2..1024 (plans of O(p²)
// ops to 129) and several n:
// MPICH's and Rabenseifner's formulas for halving-doubling (power of two and
// not), recursive doubling, ring, and the trees, chains and scans of the
// library.
//
// Not here, because the plan costs more than its comment's formula, and the
// simulator reports the plan: swing_bandwidth and allgather bruck send some
// steps' data as several messages to one partner (non-contiguous slot
// ranges: one α each; `collc opt` coalesces them); the binomial trees and
// recursive-doubling scan for p not a power of two, and the
// recursive-doubling exscan for any p, finish some ranks early (their
// formulas count every round in full: an upper bound); binary_tree and
// reduce_binary_tree state their cost as "about".
#include "model/Simulator.h"
#include "schedules/Generators.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

using namespace collc;
using namespace collc::model;

namespace {

constexpr double alpha = 1e-6, beta = 1e-10, gammaCost = 3e-10;

/// ⌊lg p⌋, ⌈lg p⌉, 2^⌊lg p⌋.
uint32_t floorLg(uint32_t p) { return 31 - __builtin_clz(p); }
uint32_t ceilLg(uint32_t p) { return p == 1 ? 0 : floorLg(p - 1) + 1; }
uint32_t pof2(uint32_t p) { return 1u << floorLg(p); }
bool isPof2(uint32_t p) { return (p & (p - 1)) == 0; }

/// A formula: the time for p ranks and n bytes.
using Formula = std::function<double(double p, double n, uint32_t ip)>;

struct Expect {
  ir::Collective collective;
  const char *name;
  Formula cost;
  bool quadratic = false; ///< O(p²) ops: swept to 129
  bool pof2Only = false;  ///< the formula is for powers of two
};

const Expect expectations[] = {
    {ir::Collective::Allreduce, "ring",
     [](double p, double n, uint32_t) {
       return 2 * (p - 1) * alpha + 2 * (p - 1) / p * n * beta + (p - 1) / p * n * gammaCost;
     },
     true},
    {ir::Collective::Allreduce, "rabenseifner",
     [](double p, double n, uint32_t ip) {
       if (isPof2(ip))
         return 2 * std::log2(p) * alpha + 2 * (p - 1) / p * n * beta +
                (p - 1) / p * n * gammaCost;
       const double q = pof2(ip);
       return (2 * floorLg(ip) + 2) * alpha + (2 * (q - 1) / q + 2) * n * beta +
              (1 + (q - 1) / q) * n * gammaCost;
     }},
    {ir::Collective::Allreduce, "recursive_doubling",
     [](double, double n, uint32_t ip) {
       double t = floorLg(ip) * (alpha + n * beta + n * gammaCost);
       if (!isPof2(ip))
         t += 2 * (alpha + n * beta) + n * gammaCost;
       return t;
     }},
    {ir::Collective::Allreduce, "binary_blocks", // its cost comment, at a power of two
     [](double p, double n, uint32_t) {
       return 2 * std::log2(p) * alpha + 2 * (p - 1) / p * n * beta + (p - 1) / p * n * gammaCost;
     },
     false, true},
    {ir::Collective::Allreduce, "swing_latency",
     [](double p, double n, uint32_t) {
       return std::log2(p) * (alpha + n * beta + n * gammaCost);
     }},
    {ir::Collective::Reduce, "binomial",
     [](double, double n, uint32_t ip) { return ceilLg(ip) * (alpha + n * beta + n * gammaCost); },
     false, true},
    {ir::Collective::Reduce, "rabenseifner",
     [](double p, double n, uint32_t) {
       return 2 * std::log2(p) * alpha + 2 * (p - 1) / p * n * beta + (p - 1) / p * n * gammaCost;
     },
     false, true},
    {ir::Collective::ReduceScatterBlock, "ring",
     [](double p, double n, uint32_t) {
       return (p - 1) * alpha + (p - 1) / p * n * beta + (p - 1) / p * n * gammaCost;
     },
     true},
    {ir::Collective::ReduceScatterBlock, "recursive_halving",
     [](double p, double n, uint32_t) {
       return std::log2(p) * alpha + (p - 1) / p * n * beta + (p - 1) / p * n * gammaCost;
     }},
    {ir::Collective::Allgather, "ring",
     [](double p, double n, uint32_t) { return (p - 1) * alpha + (p - 1) / p * n * beta; },
     true},
    {ir::Collective::Allgather, "recursive_doubling",
     [](double p, double n, uint32_t) { return std::log2(p) * alpha + (p - 1) / p * n * beta; },
     true},
    {ir::Collective::Bcast, "binomial",
     [](double, double n, uint32_t ip) { return ceilLg(ip) * (alpha + n * beta); }},
    {ir::Collective::Bcast, "chain",
     [](double p, double n, uint32_t) { return (8 + p - 2) * (alpha + n / 8 * beta); }},
    {ir::Collective::Scan, "chain",
     [](double p, double n, uint32_t) { return (p - 1) * (alpha + n * beta + n * gammaCost); }},
    {ir::Collective::Scan, "recursive_doubling",
     [](double, double n, uint32_t ip) { return ceilLg(ip) * (alpha + n * beta + n * gammaCost); },
     false, true},
    {ir::Collective::Exscan, "chain",
     [](double p, double n, uint32_t ip) {
       return (p - 1) * (alpha + n * beta) + (ip >= 2 ? p - 2 : 0) * n * gammaCost;
     }},
};

std::vector<uint32_t> rankCounts() {
  std::vector<uint32_t> ps;
  for (uint32_t p = 2; p <= 33; ++p)
    ps.push_back(p);
  for (uint32_t p : {63u, 64u, 65u, 127u, 128u, 129u, 255u, 256u, 257u, 511u, 512u, 513u, 1023u,
                     1024u})
    ps.push_back(p);
  return ps;
}

class ClosedForm : public testing::TestWithParam<size_t> {};

TEST_P(ClosedForm, SimulatorReproducesTheCostComment) {
  const Expect &e = expectations[GetParam()];
  const sched::Algorithm *alg = sched::findAlgorithm(e.collective, e.name);
  ASSERT_NE(alg, nullptr) << e.name;
  Topology t;
  t.name = "uniform";
  t.levels.push_back({"system", 1u << 20, alpha, beta, 1});
  t.gamma = gammaCost;
  int checked = 0;
  for (uint32_t p : rankCounts()) {
    sched::GenOptions o;
    o.ranks = p;
    if (!alg->accepts(o))
      continue;
    // The O(p²)-op plans (ring, ...) stop at 129: at 1024 they are millions of
    // ops, seconds of a test's time; the others go to 1024.
    if ((e.quadratic && p > 129) || (e.pof2Only && !isPof2(p)))
      continue;
    ir::Plan plan = alg->build(o);
    llvm::Expected<Placement> pl = place(t, p);
    ASSERT_TRUE(bool(pl));
    // Sizes that every chunk divides (the formulas count n/C exactly).
    std::vector<uint64_t> sizes = {0, plan.shape.chunks, 1000ull * plan.shape.chunks,
                                   65536ull * plan.shape.chunks};
    for (uint64_t n : sizes) {
      SimOptions so;
      so.bytes = n;
      so.elemBytes = 1;
      so.gamma = gammaCost;
      so.criticalPath = false;
      llvm::Expected<SimResult> r = simulate(plan, t, *pl, so);
      ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
      const double want = e.cost(double(p), double(n), p);
      EXPECT_NEAR(r->time, want, want * 1e-9 + 1e-15)
          << name(e.collective).str() << " " << e.name << " p=" << p << " n=" << n;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(Library, ClosedForm, testing::Range<size_t>(0, std::size(expectations)),
                         [](const testing::TestParamInfo<size_t> &i) {
                           return std::string(name(expectations[i.param].collective)) + "_" +
                                  expectations[i.param].name;
                         });

} // namespace
