// tests/compiler/GeneratorProofTest.cpp: the verifier proves every generator
// for every rank count the tests sweep, and refuses what it must.
#include "compiler/Verifier.h"
#include "schedules/Generators.h"
#include "tests/support/ReferenceInterpreter.h"

#include <gtest/gtest.h>

using namespace collc;

namespace {

std::vector<uint32_t> rankCounts() {
  std::vector<uint32_t> ps;
  for (uint32_t p = 1; p <= 17; ++p)
    ps.push_back(p);
  for (uint32_t p : {24u, 31u, 32u, 33u, 64u, 100u})
    ps.push_back(p);
  return ps;
}

std::vector<uint32_t> rootsFor(ir::Collective c, uint32_t p) {
  if (!ir::hasRoot(c))
    return {0};
  std::vector<uint32_t> roots = {0, p / 2, p - 1};
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  return roots;
}

std::string firstErrors(const compiler::VerifyResult &r) {
  std::string s;
  for (size_t i = 0; i < r.diagnostics.size() && i < 3; ++i)
    s += compiler::toString(r.diagnostics[i]) + "\n";
  return s;
}

TEST(GeneratorProof, EveryGeneratorIsProvenForEveryRankCountAndRoot) {
  for (const sched::Algorithm &a : sched::algorithms())
    for (uint32_t p : rankCounts())
      for (uint32_t root : rootsFor(a.collective, p)) {
        sched::GenOptions o;
        o.ranks = p;
        o.root = root;
        if (!a.accepts(o))
          continue; // the file's `require` refuses this p
        ir::Plan plan = a.build(o);
        compiler::VerifyOptions vo;
        vo.requireIdentical = a.name != "swing_latency"; // see below
        compiler::VerifyResult r = compiler::verify(plan, vo);
        EXPECT_TRUE(r.proven()) << a.name.str() << " " << ir::name(a.collective).str() << " p=" << p
                                << " root=" << root << "\n"
                                << firstErrors(r);
        EXPECT_EQ(plan.shape.commutative, a.needsCommutative) << a.name.str();
        EXPECT_EQ(plan.shape.inPlace, a.inPlace) << a.name.str();
        EXPECT_EQ(r.stats.ops, plan.numOps());
      }
}

// The collectives that move blocks between ranks (alltoall, gather, scatter)
// are proven for every p up to 64 and, where rooted, every root; each in
// place too where the algorithm claims it.
TEST(GeneratorProof, BlockMovingAlgorithmsAreProvenForEveryRankCountAndEveryRoot) {
  unsigned cases = 0;
  for (const sched::Algorithm &a : sched::algorithms()) {
    if (a.collective != ir::Collective::Alltoall && a.collective != ir::Collective::Gather &&
        a.collective != ir::Collective::Scatter)
      continue;
    for (uint32_t p = 1; p <= 64; ++p)
      for (uint32_t root = 0; root < (ir::hasRoot(a.collective) ? p : 1); ++root) {
        sched::GenOptions o;
        o.ranks = p;
        o.root = root;
        if (!a.accepts(o))
          continue;
        compiler::VerifyResult r = compiler::verify(a.build(o));
        ASSERT_TRUE(r.proven()) << a.name.str() << " " << ir::name(a.collective).str()
                                << " p=" << p << " root=" << root << "\n"
                                << firstErrors(r);
        ++cases;
      }
  }
  EXPECT_EQ(cases, 3u * 64 + 4u * (64 * 65 / 2));
}

// A barrier is proven for every p up to 64, and the reference interpreter,
// which tracks whom each op has heard from on its own, agrees. Without its
// dependencies a barrier of 5 or more ranks is no barrier: a rank hears only
// from the ranks that message it directly, and both refuse it.
TEST(GeneratorProof, BarriersAreProvenAndNeedTheirDependencies) {
  unsigned algorithms = 0;
  for (const sched::Algorithm &a : sched::algorithms()) {
    if (a.collective != ir::Collective::Barrier)
      continue;
    ++algorithms;
    for (uint32_t p = 1; p <= 64; ++p) {
      ir::Plan plan = a.build({p, 0});
      compiler::VerifyResult r = compiler::verify(plan);
      ASSERT_TRUE(r.proven()) << a.name.str() << " p=" << p << "\n" << firstErrors(r);
      test::RefOutcome ref = test::runReference(plan);
      EXPECT_TRUE(ref.ok) << a.name.str() << " p=" << p << ": " << ref.error;
      if (p < 5)
        continue;
      for (ir::Program &prog : plan.programs)
        for (ir::Op &op : prog.ops) {
          op.deps = ir::DepKind::None;
          op.after.clear();
        }
      r = compiler::verify(plan, {.maxErrors = 0});
      EXPECT_TRUE(llvm::any_of(r.diagnostics, [](const compiler::Diagnostic &d) {
        return d.cls == compiler::DiagClass::Unsynchronized;
      })) << a.name.str() << " p=" << p;
      test::RefOptions o;
      o.checkRaces = false;
      ref = test::runReference(plan, o);
      EXPECT_EQ(ref.kind, test::RefErrorKind::Unsynchronized)
          << a.name.str() << " p=" << p << ": " << ref.error;
    }
  }
  EXPECT_EQ(algorithms, 2u);
}

TEST(GeneratorProof, OrderPreservingGeneratorsAreProvenForNoncommutativeOps) {
  for (const sched::Algorithm &a : sched::algorithms()) {
    if (a.needsCommutative)
      continue;
    for (uint32_t p : rankCounts())
      for (uint32_t root : rootsFor(a.collective, p)) {
        sched::GenOptions o;
        o.ranks = p;
        o.root = root;
        if (!a.accepts(o))
          continue;
        compiler::VerifyOptions vo;
        vo.noncommutative = true;
        compiler::VerifyResult r = compiler::verify(a.build(o), vo);
        EXPECT_TRUE(r.proven()) << a.name.str() << " p=" << p << " root=" << root << "\n"
                                << firstErrors(r);
      }
  }
}

// Properties are proven, not declared: what the registry says of an
// algorithm (correct for any associative operation, correct in place) is
// exactly what the verifier proves for every rank count and root swept — a
// commutative-only claim must fail the order check somewhere, an in-place
// claim must hold everywhere, and a plan not claimed in place must fail
// somewhere when aliased.
TEST(GeneratorProperties, RegistryClaimsAreTheStrongestProven) {
  for (const sched::Algorithm &a : sched::algorithms()) {
    bool anyOp = true, inPlace = true;
    for (uint32_t p : rankCounts())
      for (uint32_t root : rootsFor(a.collective, p)) {
        sched::GenOptions o;
        o.ranks = p;
        o.root = root;
        if (!a.accepts(o))
          continue; // the file's `require` refuses this p
        ir::Plan plan = a.build(o);
        compiler::VerifyOptions vo;
        vo.noncommutative = true;
        anyOp = anyOp && compiler::verify(plan, vo).proven();
        plan.shape.inPlace = true;
        inPlace = inPlace && compiler::verify(plan).proven();
      }
    EXPECT_EQ(a.needsCommutative, !anyOp)
        << a.name.str() << " " << ir::name(a.collective).str()
        << (anyOp ? ": proven for any associative operation, but claims only commutative ones"
                  : ": claims any associative operation, but the order check fails");
    EXPECT_EQ(a.inPlace, inPlace) << a.name.str() << " " << ir::name(a.collective).str();
  }
}

TEST(GeneratorProof, SwingLatencyIsProvenButItsRanksBuildDifferentTrees) {
  const sched::Algorithm *a = sched::findAlgorithm(ir::Collective::Allreduce, "swing_latency");
  ASSERT_NE(a, nullptr);
  for (uint32_t p : {8u, 16u, 64u}) {
    compiler::VerifyResult r = compiler::verify(a->build({p, 0}));
    EXPECT_TRUE(r.proven()) << firstErrors(r);
    EXPECT_FALSE(r.stats.identical) << p;
  }
}

TEST(GeneratorProof, RejectsRingForNonCommutativeOps) {
  for (uint32_t p = 3; p <= 33; ++p) {
    sched::GenOptions o;
    o.ranks = p;
    compiler::VerifyOptions vo;
    vo.noncommutative = true;
    compiler::VerifyResult r = compiler::verify(sched::findAlgorithm(ir::Collective::Allreduce, "ring")->build(o), vo);
    ASSERT_FALSE(r.proven()) << p;
    for (const compiler::Diagnostic &d : r.diagnostics)
      EXPECT_EQ(d.cls, compiler::DiagClass::Order) << compiler::toString(d);
  }
}

TEST(GeneratorProof, AllreduceGeneratorsGiveIdenticalResultsOnAllRanks) {
  for (const sched::Algorithm &a : sched::algorithms()) {
    // Swing's latency-optimal variant cannot: its partner groups do not nest,
    // so ranks combine the same values in different trees (its file says so).
    if (a.collective != ir::Collective::Allreduce || a.name == "swing_latency")
      continue;
    for (uint32_t p = 1; p <= 64; ++p) {
      sched::GenOptions o;
      o.ranks = p;
      if (!a.accepts(o))
        continue;
      compiler::VerifyOptions vo;
      vo.requireIdentical = true;
      compiler::VerifyResult r = compiler::verify(a.build(o), vo);
      EXPECT_TRUE(r.proven() && r.stats.identical) << a.name.str() << " p=" << p << "\n"
                                                   << firstErrors(r);
    }
  }
}

} // namespace
