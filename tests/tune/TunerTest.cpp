// tests/tune/TunerTest.cpp: the tuner's choices where the answer is known by
// hand, its determinism, its budget, and its outputs.
#include "compiler/Disasm.h"
#include "compiler/Verifier.h"
#include "model/Simulator.h"
#include "tune/Isolate.h"
#include "tune/Native.h"
#include "tune/Refit.h"
#include "tune/Report.h"
#include "tune/Tuner.h"
#include "runtime/bytecode/Bundle.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

using namespace collc;
using namespace collc::tune;

namespace {

model::Topology topology(const std::string &text) {
  llvm::Expected<model::Topology> t = model::parseTopology(text, "test.yaml");
  if (!t) {
    ADD_FAILURE() << llvm::toString(t.takeError());
    return {};
  }
  return std::move(*t);
}

/// One level, α, β = 1/(10 GB/s), γ = 1/(5 GB/s), no contention: the
/// textbook machine of the algorithm files' cost comments.
model::Topology uniform(const std::string &latency) {
  return topology("format: collc-topology/1\nname: flat\nlevels:\n"
                  "  - {name: system, size: 1024, latency: " +
                  latency + ", bandwidth: 10GB/s}\nreduce: 5GB/s\n");
}

/// 2 nodes x 2 ranks: α_node 1us, β_node 1/(10 GB/s); the network's α as
/// given, β 1/(1 GB/s); γ 1/(1 GB/s).
model::Topology twoByTwo(const std::string &netLatency) {
  return topology("format: collc-topology/1\nname: t2x2\nlevels:\n"
                  "  - {name: node, size: 2, latency: 1us, bandwidth: 10GB/s}\n"
                  "  - {name: network, size: 2, latency: " +
                  netLatency + ", bandwidth: 1GB/s}\nreduce: 1GB/s\n");
}

TuneOptions options(uint32_t p, std::vector<std::string> algorithms, const char *sizes) {
  TuneOptions o;
  o.ranks = p;
  o.candidates.algorithms = std::move(algorithms);
  o.candidates.segments = {1};
  llvm::Expected<std::vector<uint64_t>> s = parseSizes(sizes, 8);
  EXPECT_TRUE(bool(s));
  o.sizes = s ? *s : std::vector<uint64_t>{};
  o.budget = std::numeric_limits<double>::infinity();
  return o;
}

TuneResult run(const model::Topology &t, const TuneOptions &o) {
  llvm::Expected<TuneResult> r = tune::tune(t, o);
  if (!r) {
    ADD_FAILURE() << llvm::toString(r.takeError());
    return {};
  }
  return std::move(*r);
}

const std::string &planAt(const TuneResult &r, size_t range) {
  return r.candidates[r.ranges[range].candidate].name;
}

/// Two ranges, `small` below the boundary and `large` above, the boundary
/// within 1/32 of `expected` bytes.
void expectCrossover(const TuneResult &r, const std::string &small, const std::string &large,
                     double expected) {
  ASSERT_EQ(r.ranges.size(), 2u);
  EXPECT_EQ(planAt(r, 0), small);
  EXPECT_EQ(planAt(r, 1), large);
  EXPECT_EQ(r.ranges[0].minBytes, 0u);
  EXPECT_EQ(r.ranges[1].maxBytes, rt::bundle::unbounded);
  EXPECT_NEAR(double(r.ranges[0].maxBytes), expected, expected / 32);
}

// Recursive doubling costs lg p (α + nβ + nγ), Rabenseifner's
// halving-doubling 2 lg p α + 2n(p-1)/p β + n(p-1)/p γ. At p = 4 they cross
// where 2α = n(β/2 + 5γ/4): n* = 2α / (0.5β + 1.25γ). A higher latency moves
// the crossover up in proportion.
TEST(Tuner, RecursiveDoublingBelowTheClosedFormCrossoverRabenseifnerAbove) {
  const double beta = 1 / 10e9, gamma = 1 / 5e9;
  for (double alpha : {1e-6, 10e-6}) {
    SCOPED_TRACE(alpha);
    const TuneResult r =
        run(uniform(std::to_string(alpha * 1e6) + "us"),
            options(4, {"recursive_doubling", "rabenseifner"}, "1K..512K"));
    expectCrossover(r, "recursive_doubling", "rabenseifner",
                    2 * alpha / (0.5 * beta + 1.25 * gamma));
    EXPECT_NE(whyAt(r, 0).find("vs rabenseifner: "), std::string::npos) << whyAt(r, 0);
    EXPECT_NE(whyAt(r, 0).find("less α system (2 vs 4 messages)"), std::string::npos)
        << whyAt(r, 0);
  }
}

// On 2 nodes x 2 ranks (block mapping), recursive doubling exchanges whole
// vectors in the node and then across: α_n + α_N + n(β_n + β_N + 2γ). The
// two-level plan reduce-scatters in the node, exchanges halves across and
// allgathers: 2α_n + 2α_N + n(β_n + β_N + γ). The hierarchical plan wins
// once nγ > α_n + α_N, so a slower network (a larger α_N) keeps the flat
// plan up to larger vectors.
TEST(Tuner, TwoLevelWinsOnceTheReductionItSavesOutweighsItsLatencies) {
  const double gamma = 1e-9, alphaNode = 1e-6;
  for (double alphaNet : {5e-6, 50e-6}) {
    SCOPED_TRACE(alphaNet);
    const TuneResult r = run(twoByTwo(std::to_string(alphaNet * 1e6) + "us"),
                             options(4, {"recursive_doubling", "two_level"}, "1K..1M"));
    // The plan depends on the topology: its name says which.
    expectCrossover(r, "recursive_doubling", "two_level@t2x2", (alphaNode + alphaNet) / gamma);
  }
}

/// 4 nodes x 4 ranks whose network link is shared by a node's 4 ranks, with
/// the network's latency and bandwidth given.
model::Topology fourByFour(const std::string &network) {
  return topology("format: collc-topology/1\nname: t4x4\nlevels:\n"
                  "  - {name: node, size: 4, latency: 0.5us, bandwidth: 10GB/s}\n"
                  "  - {name: network, size: 4, " +
                  network + ", share: 4}\nreduce: 5GB/s\n");
}

const CandidateResult *candidate(const TuneResult &r, const std::string &name) {
  for (const CandidateResult &c : r.candidates)
    if (c.name == name)
      return &c;
  ADD_FAILURE() << "no candidate " << name;
  return nullptr;
}

// On a slow network that a node's ranks share, the flat plans send every
// rank's vector across it, four to a link; the single-leader plan reduces
// in the node first and sends one vector per node, so it wins once the
// bytes through the shared link outweigh its extra rounds in the node. On a
// fast network the extra rounds cost more than the bytes saved, and a flat
// plan wins everywhere.
TEST(Tuner, ASlowSharedNetworkMakesTheSingleLeaderPlanWinAFastOneAFlatPlan) {
  const std::vector<std::string> algorithms{"recursive_doubling", "ring", "single_leader"};
  const TuneResult slow =
      run(fourByFour("latency: 50us, bandwidth: 0.1GB/s"), options(16, algorithms, "8..1M"));
  ASSERT_FALSE(slow.ranges.empty());
  EXPECT_EQ(planAt(slow, 0), "recursive_doubling");
  // single_leader, with its default choices or another one at some level.
  EXPECT_EQ(planAt(slow, slow.ranges.size() - 1).rfind("single_leader", 0), 0u)
      << planAt(slow, slow.ranges.size() - 1);
  const CandidateResult *leader = candidate(slow, "single_leader@t4x4"),
                        *flat = candidate(slow, "recursive_doubling");
  ASSERT_TRUE(leader && flat);
  const SizeTime &l = leader->times.back(), &f = flat->times.back();
  EXPECT_LT(l.time, f.time);
  // The saving is the network's bytes: a quarter of the flat plan's.
  EXPECT_LT(l.terms.bytes[1] * 2, f.terms.bytes[1]);

  const TuneResult fast =
      run(fourByFour("latency: 1us, bandwidth: 100GB/s"), options(16, algorithms, "8..1M"));
  // A flat plan beats the single-leader plan (with its default choices) at
  // every size.
  const CandidateResult *fastLeader = candidate(fast, "single_leader@t4x4"),
                        *fastRd = candidate(fast, "recursive_doubling"),
                        *fastRing = candidate(fast, "ring");
  ASSERT_TRUE(fastLeader && fastRd && fastRing);
  ASSERT_EQ(fastLeader->times.size(), fastRd->times.size());
  for (size_t i = 0; i < fastLeader->times.size(); ++i)
    EXPECT_LT(std::min(fastRd->times[i].time, fastRing->times[i].time),
              fastLeader->times[i].time)
        << "size " << i;
}

TEST(Tuner, IdenticalInputsGiveIdenticalOutputs) {
  const model::Topology t = twoByTwo("5us");
  TuneOptions o = options(4, {}, "8..256K");
  o.candidates.segments = {1, 2, 4};
  const TuneResult a = run(t, o), b = run(t, o);
  const OutputNames names{"t.yaml", "t.cbundle", "t.rules.yaml", "collc tune ..."};
  llvm::Expected<std::vector<uint8_t>> ba = bundleOf(a), bb = bundleOf(b);
  ASSERT_TRUE(ba && bb);
  EXPECT_EQ(*ba, *bb);
  EXPECT_EQ(rulesOf(a, names), rulesOf(b, names));
  EXPECT_EQ(reportOf(a, names), reportOf(b, names));
  EXPECT_EQ(jsonOf(a), jsonOf(b));
  EXPECT_EQ(summaryOf(a), summaryOf(b));
  // In process (no child processes) the same again.
  o.isolate = false;
  EXPECT_EQ(jsonOf(run(t, o)), jsonOf(a));
}

TEST(Tuner, BreakdownAddsUpToThePredictedTime) {
  const TuneResult r = run(twoByTwo("5us"), options(4, {}, "8..4M"));
  size_t checked = 0;
  for (const CandidateResult &c : r.candidates)
    for (const SizeTime &t : c.times) {
      EXPECT_NEAR(t.terms.total(), t.time, t.time * 1e-9) << c.name;
      ++checked;
    }
  EXPECT_GT(checked, 100u);
}

// Recursive doubling on 2 nodes of 4 ranks sharing one NIC: one of its 3
// rounds crosses the network, where the node's 4 messages queue at the NIC.
// The breakdown pays that round's latency once (the queued messages overlap
// it) and the transfers queued behind it, and the terms still add up to the
// time.
TEST(Tuner, ABreakdownThroughASharedLinkPaysOneLatencyPerRound) {
  const model::Topology t = topology(
      "format: collc-topology/1\nname: nic\nlevels:\n"
      "  - {name: node, size: 4, latency: 1us, bandwidth: 10GB/s}\n"
      "  - {name: network, size: 2, latency: 5us, bandwidth: 1GB/s, share: 4}\n"
      "reduce: 1GB/s\n");
  const TuneResult r = run(t, options(8, {"recursive_doubling"}, "8"));
  ASSERT_EQ(r.candidates.size(), 1u);
  const Breakdown &b = r.candidates[0].times[0].terms;
  EXPECT_EQ(b.messages[0], 2u); // the two rounds inside the node
  EXPECT_EQ(b.messages[1], 1u);
  EXPECT_NEAR(b.alpha[1], 5e-6, 1e-12);
  EXPECT_GE(b.bytes[1], 8u);
  EXPECT_NEAR(b.total(), r.candidates[0].times[0].time, 1e-15);
}

TEST(Tuner, TheBundleHoldsEveryRangesWinnerProvenAndNamed) {
  const TuneResult r = run(uniform("1us"), options(6, {}, "8..1M"));
  llvm::Expected<std::vector<uint8_t>> bytes = bundleOf(r);
  ASSERT_TRUE(bool(bytes)) << llvm::toString(bytes.takeError());
  rt::Bundle b;
  ASSERT_TRUE(rt::readBundle(*bytes, b).ok());
  ASSERT_EQ(b.entries.size(), r.ranges.size());
  EXPECT_EQ(b.ranks, 6u);
  for (size_t i = 0; i < b.entries.size(); ++i) {
    EXPECT_EQ(b.entries[i].minBytes, r.ranges[i].minBytes);
    EXPECT_EQ(b.entries[i].maxBytes, r.ranges[i].maxBytes);
    EXPECT_EQ(b.plans[i].algorithm, planAt(r, i));
    EXPECT_TRUE(b.plans[i].proof.verified && b.plans[i].proof.identical);
    llvm::Expected<ir::Plan> plan = compiler::disassemble(b.entries[i].plan);
    ASSERT_TRUE(bool(plan));
    compiler::VerifyOptions vo;
    vo.requireIdentical = true;
    EXPECT_TRUE(compiler::verify(*plan, vo).proven()) << planAt(r, i);
  }
  const std::string rules = rulesOf(r, {"u.yaml", "u.cbundle", "u.rules.yaml", ""});
  for (size_t i = 0; i < r.ranges.size(); ++i)
    EXPECT_NE(rules.find("ranks: 6, bytes: " +
                         rt::formatByteRange(r.ranges[i].minBytes, r.ranges[i].maxBytes) +
                         ", algorithm: " + planAt(r, i) + "}"),
              std::string::npos)
        << rules;
}

TEST(Tuner, NoncommutativeKeepsOnlyOrderPreservingPlans) {
  TuneOptions o = options(6, {}, "8..1M");
  o.noncommutative = true;
  const TuneResult r = run(uniform("1us"), o);
  size_t compiled = 0;
  for (const CandidateResult &c : r.candidates) {
    if (c.status == Status::Compiled) {
      ++compiled;
      EXPECT_FALSE(c.commutative) << c.name;
    }
    if (c.candidate.name == "ring") {
      EXPECT_EQ(c.status, Status::Refused);
      EXPECT_EQ(c.why.rfind("not proven for non-commutative operations: ", 0), 0u) << c.why;
    }
  }
  EXPECT_GE(compiled, 3u);
}

// Placed alternately (ranks 0, 2 on node 0), the two-level plan combines
// x0 ∘ x2 first: not rank order. It stays a candidate for commutative
// operations, and --noncommutative refuses it with the order it breaks.
TEST(Tuner, APlacementThatBreaksRankOrderLeavesTwoLevelToCommutativeOperations) {
  model::Topology t = twoByTwo("5us");
  t.mapping = model::Mapping::RoundRobin;
  t.mapBy = 0;
  TuneOptions o = options(4, {"two_level"}, "8..64K");
  const TuneResult r = run(t, o);
  ASSERT_EQ(r.candidates.size(), 1u);
  EXPECT_EQ(r.candidates[0].status, Status::Compiled);
  EXPECT_TRUE(r.candidates[0].commutative);
  o.noncommutative = true;
  llvm::Expected<TuneResult> nc = tune::tune(t, o);
  ASSERT_FALSE(bool(nc));
  EXPECT_NE(llvm::toString(nc.takeError()).find("two_level: does not verify: two_level.calgo:"),
            std::string::npos);
}

TEST(Tuner, AlgorithmsTheShapeRulesOutAreListedWithTheReason) {
  const TuneResult r = run(uniform("1us"), options(6, {}, "8..64K"));
  bool swing = false;
  for (const NotFitting &n : r.notFitting)
    if (n.name == "swing_latency") {
      swing = true;
      EXPECT_EQ(n.why, "require p == pof2(p) does not hold (p = 6)");
    }
  EXPECT_TRUE(swing);
  for (const CandidateResult &c : r.candidates)
    EXPECT_NE(c.candidate.algorithm->name, "swing_latency");
}

TEST(Tuner, RefusesWhenNothingFits) {
  llvm::Expected<TuneResult> r = tune::tune(uniform("1us"), options(6, {"swing_latency"}, "8..64"));
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(llvm::toString(r.takeError()),
            "no allreduce algorithm fits 6 ranks on flat\n"
            "  swing_latency: require p == pof2(p) does not hold (p = 6)");
  llvm::Expected<TuneResult> u = tune::tune(uniform("1us"), options(6, {"rign"}, "8..64"));
  ASSERT_FALSE(bool(u));
  EXPECT_NE(llvm::toString(u.takeError()).find("unknown allreduce algorithm 'rign' (known: "),
            std::string::npos);
}

// A clock that moves one second each time it is read: every candidate costs
// a few seconds, so a 10 s budget stops the search part way, deterministically.
TEST(Tuner, TheBudgetStopsTheSearchKeepsTheBestSoFarAndSaysSo) {
  TuneOptions o = options(8, {}, "8..1M");
  o.candidates.segments = {1, 2, 4, 8};
  o.isolate = false;
  o.budget = 10;
  auto t = std::make_shared<std::chrono::steady_clock::time_point>();
  o.now = [t] { return *t += std::chrono::seconds(1); };
  const TuneResult r = run(uniform("1us"), o);
  EXPECT_TRUE(r.budgetExhausted);
  size_t compiled = 0, untried = 0;
  for (const CandidateResult &c : r.candidates) {
    compiled += c.status == Status::Compiled;
    untried += c.status == Status::NotTried;
  }
  EXPECT_GE(compiled, 1u);
  EXPECT_GE(untried, r.candidates.size() / 2);
  EXPECT_EQ(r.budgetNote.rfind("the budget of 10.0 s ran out after ", 0), 0u) << r.budgetNote;
  EXPECT_NE(r.budgetNote.find("; not tried: "), std::string::npos);
  EXPECT_NE(reportOf(r, {}).find(r.budgetNote), std::string::npos);
  EXPECT_NE(summaryOf(r).find("budget: " + r.budgetNote), std::string::npos);
  EXPECT_TRUE(bool(bundleOf(r)));
}

// Swing's bandwidth plan at 256 ranks takes minutes to optimize (coalescing
// its many messages); with a 24 s budget it is stopped mid-way (after a
// quarter of the budget, the most one candidate may take) and the search
// returns with the plans it has.
TEST(Tuner, ACompilationLongerThanItsShareOfTheBudgetIsStopped) {
  // At 256 ranks recursive doubling compiles in tens of milliseconds (over a
  // second under ASan on a loaded CI machine) and swing_bandwidth in
  // minutes, so a quarter of 24 s separates them whatever the machine's speed.
  TuneOptions o = options(256, {"recursive_doubling", "swing_bandwidth"}, "8..1M");
  o.candidates.segments = {1, 2};
  o.budget = 24;
  const auto t0 = std::chrono::steady_clock::now();
  const TuneResult r = run(uniform("1us"), o);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.candidates.size(), 4u);
  EXPECT_EQ(r.candidates[0].status, Status::Compiled); // recursive_doubling
  EXPECT_EQ(r.candidates[1].status, Status::Compiled); // recursive_doubling.seg2
  EXPECT_EQ(r.candidates[2].status, Status::Stopped);
  EXPECT_EQ(r.candidates[2].why, "it took more than a quarter of the budget (6.00 s)");
  // Its pipelined variant, larger still, is not tried.
  EXPECT_EQ(r.candidates[3].status, Status::NotTried);
  EXPECT_EQ(r.candidates[3].why, "swing_bandwidth took more than a quarter of the budget, and "
                                 "this variant is larger");
  EXPECT_TRUE(r.budgetExhausted);
  EXPECT_LT(took, 60.0); // the compilation alone takes minutes
}

// Refitting: "measurements" simulated on the same machine with other costs
// (α ×3, β ×0.5, γ ×2). The refit recovers those costs and leaves alone a
// level no plan crosses (a rack of one system); its output reads back.
TEST(Refit, RecoversTheCostsTheMeasurementsWereMadeWithAndKeepsTheRest) {
  const std::string rack = "  - {name: rack, size: 1, latency: 9us, bandwidth: 1GB/s}\n";
  const model::Topology model = topology(
      "format: collc-topology/1\nname: flat\nlevels:\n"
      "  - {name: system, size: 1024, latency: 2us, bandwidth: 10GB/s}\n" + rack +
      "reduce: 5GB/s\n");
  const model::Topology truth = topology(
      "format: collc-topology/1\nname: flat\nlevels:\n"
      "  - {name: system, size: 1024, latency: 6us, bandwidth: 20GB/s}\n" + rack +
      "reduce: 2.5GB/s\n");
  TuneOptions o = options(4, {"recursive_doubling", "rabenseifner", "ring"}, "8..4M");
  o.isolate = false;
  TuneResult r = run(model, o);
  ASSERT_FALSE(r.candidates.empty());
  for (size_t s = 0; s < o.sizes.size(); ++s) {
    Measurement m;
    m.native = 1;
    for (size_t c : measureCandidates(r, s, 3)) {
      llvm::Expected<ir::Plan> p = compiler::disassemble(r.candidates[c].plan);
      ASSERT_TRUE(bool(p));
      m.timed.push_back(c);
      m.times.push_back(model::predictTimes(*p, truth, {o.sizes[s]}, 8, truth.gamma)[0]);
    }
    r.measured.push_back(std::move(m));
  }
  llvm::Expected<Refit> f = refit(model, r);
  ASSERT_TRUE(bool(f)) << llvm::toString(f.takeError());
  EXPECT_GT(f->errorBefore, 0.3);
  EXPECT_LT(f->errorAfter, 0.01);
  ASSERT_EQ(f->costs.size(), 5u); // system α β, rack α β, γ
  EXPECT_NEAR(f->costs[0].after, 6e-6, 6e-6 * 0.05);
  EXPECT_NEAR(f->costs[1].after, 1 / 20e9, 1 / 20e9 * 0.05);
  EXPECT_NEAR(f->costs[4].after, 1 / 2.5e9, 1 / 2.5e9 * 0.05);
  for (size_t k : {2, 3}) {
    EXPECT_EQ(f->costs[k].kept, "no measured plan depends on it");
    EXPECT_EQ(f->costs[k].after, f->costs[k].before);
  }
  EXPECT_NEAR(f->topology.gammaOf("double"), 1 / 2.5e9, 1 / 2.5e9 * 0.05);
  EXPECT_EQ(f->topology.gammaOf("float"), 1 / 5e9); // another datatype keeps its γ
  llvm::Expected<model::Topology> back =
      model::parseTopology(model::printTopology(f->topology), "refit.yaml");
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->name, "flat-refit");
  EXPECT_NEAR(back->levels[0].alpha, f->costs[0].after, f->costs[0].after * 1e-3);
  const std::string md = refitReport(*f);
  EXPECT_NE(md.find("| rack latency | 9 us | 9 us | kept: no measured plan depends on it |"),
            std::string::npos)
      << md;

  r.measured.assign(o.sizes.size(), Measurement{{}, {}, -1, {}}); // nothing measured
  llvm::Expected<Refit> none = refit(model, r);
  ASSERT_FALSE(bool(none));
  EXPECT_EQ(llvm::toString(none.takeError()),
            "nothing was measured, so there is nothing to refit to");
}

TEST(Isolate, ReturnsTheBytesAReportsDeathsAndStopsAtTheDeadline) {
  const auto far = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  Isolated ok = runIsolated([] { return std::string("abc\0def", 7); }, far);
  EXPECT_EQ(ok.outcome, Outcome::Done);
  EXPECT_EQ(ok.bytes, std::string("abc\0def", 7));
  Isolated thrown = runIsolated([]() -> std::string { throw std::runtime_error("boom"); }, far);
  EXPECT_EQ(thrown.outcome, Outcome::Failed);
  EXPECT_EQ(thrown.why, "boom");
  Isolated died = runIsolated([]() -> std::string { std::abort(); }, far);
  EXPECT_EQ(died.outcome, Outcome::Failed);
  EXPECT_EQ(died.why.rfind("it was killed by signal 6", 0), 0u) << died.why;
  Isolated late = runIsolated(
      [] {
        std::this_thread::sleep_for(std::chrono::seconds(30));
        return std::string("late");
      },
      std::chrono::steady_clock::now() + std::chrono::milliseconds(100));
  EXPECT_EQ(late.outcome, Outcome::Deadline);
}

TEST(ParseSizes, RangesListsAndElementRounding) {
  auto sizes = [](const char *t, uint32_t e) {
    llvm::Expected<std::vector<uint64_t>> s = parseSizes(t, e);
    if (!s)
      return std::vector<uint64_t>{999};
    return *s;
  };
  EXPECT_EQ(sizes("8..64", 8), (std::vector<uint64_t>{8, 16, 32, 64}));
  EXPECT_EQ(sizes("100..1000", 8), (std::vector<uint64_t>{96, 128, 256, 512, 1000}));
  EXPECT_EQ(sizes("1..4", 8), (std::vector<uint64_t>{8})); // at least one element
  EXPECT_EQ(sizes("1K,64,1K", 4), (std::vector<uint64_t>{64, 1024}));
  EXPECT_EQ(sizes("8..256M", 8).size(), 26u);
  for (const char *bad : {"", "8..", "..8", "x", "64..8", "1K,,2K", "8..1Q"}) {
    llvm::Expected<std::vector<uint64_t>> s = parseSizes(bad, 8);
    ASSERT_FALSE(bool(s)) << bad;
    EXPECT_EQ(llvm::toString(s.takeError()).rfind(std::string("--sizes '") + bad + "': ", 0), 0u);
  }
}

TEST(Candidates, ParametersTakeTheirDefaultAndTheRadicesTheFileAccepts) {
  lang::Param k;
  k.defaultValue = 2;
  EXPECT_EQ(parameterValues(k), (std::vector<int64_t>{2, 3, 4, 8}));
  k.defaultValue = 16;
  EXPECT_EQ(parameterValues(k), (std::vector<int64_t>{2, 3, 4, 8, 16}));
  lang::InstantiateOptions shape;
  shape.ranks = 16;
  CandidateOptions co;
  co.algorithms = {"recursive_multiplying"};
  co.segments = {1, 4};
  llvm::Expected<Enumeration> e = enumerate(ir::Collective::Allreduce, shape, co);
  ASSERT_TRUE(bool(e));
  std::vector<std::string> names;
  for (const Candidate &c : e->candidates)
    names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "recursive_multiplying", "recursive_multiplying.seg4",
                       "recursive_multiplying.k3", "recursive_multiplying.k3.seg4",
                       "recursive_multiplying.k4", "recursive_multiplying.k4.seg4",
                       "recursive_multiplying.k8", "recursive_multiplying.k8.seg4"}));
}

} // namespace

namespace {

/// The numbers of an Open MPI rules file, comments dropped.
std::vector<int64_t> numbersOf(const std::string &text) {
  std::vector<int64_t> out;
  llvm::SmallVector<llvm::StringRef, 64> lines;
  llvm::StringRef(text).split(lines, '\n');
  for (llvm::StringRef line : lines) {
    llvm::SmallVector<llvm::StringRef, 8> words;
    line.split('#').first.split(words, ' ', -1, false);
    for (llvm::StringRef w : words) {
      int64_t v = 0;
      EXPECT_FALSE(w.getAsInteger(10, v)) << "'" << w.str() << "' in\n" << text;
      out.push_back(v);
    }
  }
  return out;
}

} // namespace

// At p = 4 on the textbook machine recursive doubling wins short vectors and
// Rabenseifner long ones (above); Open MPI numbers them 3 and 6, and the file
// leaves communicators of 5 ranks and more to Open MPI (algorithm 0).
TEST(Native, OpenMpiRulesNameTheAlgorithmPerSizeAndLeaveOtherSizesAlone) {
  const TuneResult r = run(uniform("1us"), options(4, {"recursive_doubling", "rabenseifner"},
                                                   "8..1M"));
  llvm::Expected<std::vector<NativeRange>> ranges = nativeRanges(r, NativeFormat::OmpiRules);
  ASSERT_TRUE(bool(ranges)) << llvm::toString(ranges.takeError());
  ASSERT_EQ(ranges->size(), 2u);
  EXPECT_EQ((*ranges)[0].algorithm.id, 3);
  EXPECT_EQ((*ranges)[1].algorithm.id, 6);
  EXPECT_EQ((*ranges)[0].maxBytes, (*ranges)[1].minBytes);
  llvm::Expected<std::string> file = nativeFile(r, NativeFormat::OmpiRules, "");
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  const int64_t edge = int64_t((*ranges)[1].minBytes);
  EXPECT_EQ(numbersOf(*file),
            (std::vector<int64_t>{1, 2, 2, 4, 2, 0, 3, 0, 0, edge, 6, 0, 0, 5, 1, 0, 0, 0, 0}));
  // Merged: another collective is kept, this one's entry at 4 ranks replaced,
  // an entry at 5 ranks the file already had kept.
  const std::string before = "# hand-written\n2\n7 1\n1 1 0 6 0 0\n2 2\n4 1 0 4 0 0\n"
                             "5 1 0 1 0 0\n";
  llvm::Expected<std::string> merged = nativeFile(r, NativeFormat::OmpiRules, before);
  ASSERT_TRUE(bool(merged)) << llvm::toString(merged.takeError());
  EXPECT_EQ(numbersOf(*merged), (std::vector<int64_t>{2, 2, 2, 4, 2, 0, 3, 0, 0, edge, 6, 0, 0,
                                                      5, 1, 0, 1, 0, 0, 7, 1, 1, 1, 0, 6, 0, 0}));
  // Merging again changes nothing.
  llvm::Expected<std::string> again = nativeFile(r, NativeFormat::OmpiRules, *merged);
  ASSERT_TRUE(bool(again));
  EXPECT_EQ(*again, *merged);
}

TEST(Native, AFileThatIsNotOpenMpisRulesIsNotMergedInto) {
  for (const auto &[text, why] : std::vector<std::pair<std::string, std::string>>{
           {"allreduce: ring\n", "line 1: 'a' is neither a number nor a # comment"},
           {"1\n2\n1\n4\n2\n0 3 0 0\n", "the file ends where a message rule's four numbers"},
           {"1\n2\n", "the file ends where its number of communicator sizes should be"},
           {"1\n2 1 4 1 0 3 0 0\n9\n", "line 3: numbers after the last collective's rules"},
           {"1 2 1 4 1 99999999999 3 0 0\n", "line 1: '99999999999' is too large"},
       }) {
    llvm::Error e = checkNativeFile(NativeFormat::OmpiRules, ir::Collective::Allreduce, text);
    ASSERT_TRUE(bool(e)) << text;
    const std::string m = llvm::toString(std::move(e));
    EXPECT_NE(m.find(why), std::string::npos) << m;
  }
  EXPECT_FALSE(bool(checkNativeFile(NativeFormat::OmpiRules, ir::Collective::Allreduce, "# only a comment\n")));
}

TEST(Native, NoCandidateTheMpiHasIsAnErrorNamingTheOnesItHas) {
  TuneOptions o = options(4, {"bcast_chain"}, "8..64K");
  o.collective = ir::Collective::Bcast;
  o.candidates.algorithms = {"chain"};
  const TuneResult r = run(uniform("1us"), o);
  llvm::Expected<std::vector<NativeRange>> ranges = nativeRanges(r, NativeFormat::OmpiRules);
  ASSERT_FALSE(bool(ranges));
  EXPECT_EQ(llvm::toString(ranges.takeError()),
            "--emit ompi-rules: no compiled candidate is an algorithm Open MPI has (for bcast: "
            "binomial, scatter_allgather, without --segments above 1 or parameters set)");
}

namespace {

/// A selection with every collective collc tunes, each one algorithm
/// (exscan's without a communicator type, as MPICH's own).
std::string mpichBase() {
  std::string s = "{";
  for (const char *c : {"allreduce", "reduce", "reduce_scatter_block", "allgather", "bcast", "scan"})
    s += std::string("\"collective=") + c + "\": {\"comm_type=intra\": {\"algorithm=MPIR_X_" + c +
         "\": {}}, \"comm_type=inter\": {\"algorithm=Y\": {}}},\n";
  return s + "\"collective=exscan\": {\"algorithm=MPIR_X_exscan\": {}}}";
}

/// A file's text without white space, to compare with the expected nesting.
std::string squeezed(const std::string &s) {
  std::string out;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c)))
      out += c;
  return out;
}

} // namespace

// MPICH: communicators of 4 ranks get the tuned sizes (Rabenseifner guarded:
// MPICH runs it only for built-in operations and count >= 4, recursive
// doubling otherwise), every other size the selection the file had; a second
// tuning at 4 ranks replaces the middle branch, one at 8 ranks wraps again.
TEST(Native, MpichJsonWrapsTheSelectionForThisRankCount) {
  const TuneResult r = run(uniform("1us"), options(4, {"recursive_doubling", "rabenseifner"},
                                                   "8..1M"));
  llvm::Expected<std::vector<NativeRange>> ranges = nativeRanges(r, NativeFormat::MpichJson);
  ASSERT_TRUE(bool(ranges)) << llvm::toString(ranges.takeError());
  ASSERT_EQ(ranges->size(), 2u);
  const std::string edge = std::to_string((*ranges)[0].maxBytes);
  llvm::Expected<std::string> file = nativeFile(r, NativeFormat::MpichJson, mpichBase());
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  const std::string rd = "{\"algorithm=MPIR_Allreduce_intra_recursive_doubling\":{}}";
  const std::string tuned =
      "{\"avg_msg_size<" + edge + "\":" + rd +
      ",\"avg_msg_size=any\":{\"is_op_built_in=yes\":{\"count<pow2\":" + rd +
      ",\"count=any\":{\"algorithm=MPIR_Allreduce_intra_reduce_scatter_allgather\":{}}},"
      "\"is_op_built_in=no\":" + rd + "}}";
  const std::string old = "{\"algorithm=MPIR_X_allreduce\":{}}";
  const std::string wrapped = "\"collective=allreduce\":{\"comm_type=intra\":{\"comm_size<4\":" +
                              old + ",\"comm_size<=4\":" + tuned + ",\"comm_size=any\":" + old +
                              "},\"comm_type=inter\":{\"algorithm=Y\":{}}}";
  EXPECT_NE(squeezed(*file).find(wrapped), std::string::npos) << *file;
  EXPECT_NE(squeezed(*file).find("\"collective=exscan\":{\"algorithm=MPIR_X_exscan\":{}}"),
            std::string::npos);
  llvm::Expected<std::string> again = nativeFile(r, NativeFormat::MpichJson, *file);
  ASSERT_TRUE(bool(again));
  EXPECT_EQ(*again, *file);
  const TuneResult r8 = run(uniform("1us"), options(8, {"recursive_doubling"}, "8..1M"));
  llvm::Expected<std::string> at8 = nativeFile(r8, NativeFormat::MpichJson, *file);
  ASSERT_TRUE(bool(at8));
  EXPECT_NE(squeezed(*at8).find("\"comm_type=intra\":{\"comm_size<8\":{\"comm_size<4\":"),
            std::string::npos)
      << *at8;
  // Scan has no size condition in MPICH: one algorithm, unconditionally.
  TuneOptions o = options(4, {"recursive_doubling"}, "8..64K");
  o.collective = ir::Collective::Scan;
  llvm::Expected<std::string> scan = nativeFile(run(uniform("1us"), o), NativeFormat::MpichJson,
                                                mpichBase());
  ASSERT_TRUE(bool(scan));
  EXPECT_NE(squeezed(*scan).find("\"comm_size<=4\":{\"algorithm=MPIR_Scan_intra_recursive_"
                                 "doubling\":{}}"),
            std::string::npos)
      << *scan;
}

TEST(Native, AFileThatIsNotAnMpichSelectionIsNotMergedInto) {
  const ir::Collective ar = ir::Collective::Allreduce;
  for (const auto &[text, why] : std::vector<std::pair<std::string, std::string>>{
           {"", "1:1: expected '{'"},
           {"{\"collective=allreduce\": [1]}", "1:26: expected '{'"},
           {"{\"collective=allreduce\": {}", "1:28: expected ',' or '}'"},
           {"{\"collective=allreduce\" {}}", "1:25: expected ':' after \"collective=allreduce\""},
           {"{\"a\": {}} x", "1:11: text after the selection's closing '}'"},
           {"{\"collective=bcast\": {}}", "it has no \"collective=allreduce\""},
           {"{\"collective=allreduce\": {\"comm_type=inter\": {}}}",
            "has no \"comm_type=intra\" branch"},
       }) {
    llvm::Error e = checkNativeFile(NativeFormat::MpichJson, ar, text);
    ASSERT_TRUE(bool(e)) << text;
    const std::string m = llvm::toString(std::move(e));
    EXPECT_NE(m.find(why), std::string::npos) << text << " -> " << m;
  }
  EXPECT_FALSE(bool(checkNativeFile(NativeFormat::MpichJson, ar, mpichBase())));
}

// MPICH's own selection is read out of the library: the NUL-delimited C
// string that is a selection with every collective collc tunes.
TEST(Native, MpichsOwnSelectionIsFoundInTheLibrary) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("libmpich", "so", path));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    using namespace std::string_literals;
    os << "\x7f" "ELF\0junk \"algorithm=MPIR_half\0"s
       << "{\"collective=bcast\": {\"algorithm=MPIR_Bcast_intra_binomial\": {}}}\0"s
       << mpichBase() << "\0tail"s;
  }
  llvm::Expected<std::string> sel = mpichDefaultSelection(path);
  llvm::sys::fs::remove(path);
  ASSERT_TRUE(bool(sel)) << llvm::toString(sel.takeError());
  EXPECT_EQ(*sel, mpichBase());
  llvm::Expected<std::string> none = mpichDefaultSelection("/nonexistent/libmpich.so");
  ASSERT_FALSE(bool(none));
  EXPECT_NE(llvm::toString(none.takeError()).find("cannot read MPICH's library"),
            std::string::npos);
}
