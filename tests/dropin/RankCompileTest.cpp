// tests/dropin/RankCompileTest.cpp: the drop-in's per-rank plans.
//
// For every library algorithm, every p up to ciProvenRanks and every root:
// the whole plan the drop-in's ranks run between them (compileWhole: the
// per-rank -O2 pipeline, every pass's result proven again) is proven with
// what the drop-in relies on — its claims (commutative only or any
// associative operation, in place) and, for allreduce, identical results
// except the algorithms nonIdenticalAllreduce names. That is the bound
// docs/dropin.md states ("proven in CI"). And each rank's program compiled
// alone (compileRank, loaded as the runtime loads it) equals that rank of the
// whole plan, for every rank at three roots up to the bound, for sampled ranks
// at two roots at p = 33, 47, 63 and 64, and for sampled ranks at p = 4096.
#include "dropin/RankCompile.h"

#include "compiler/Lower.h"
#include "compiler/Verifier.h"
#include "runtime/bytecode/Loader.h"
#include "schedules/Generators.h"

#include <gtest/gtest.h>

#include <set>

using namespace collc;

namespace {

std::string firstError(const compiler::VerifyResult &r) {
  return r.diagnostics.empty() ? "" : compiler::toString(r.diagnostics[0]);
}

lang::InstantiateOptions options(uint32_t p, uint32_t root) {
  lang::InstantiateOptions o;
  o.ranks = p;
  o.root = root;
  return o;
}

/// Rank r of `whole` against compileRank's program for r, as loaded.
void expectRankEqualsWhole(const sched::Algorithm &a, const ir::Plan &whole, uint32_t root,
                           uint32_t r, const std::string &what) {
  llvm::Expected<dropin::RankPlan> rp = dropin::compileRank(*a.module,
                                                            options(whole.shape.ranks, root), r);
  ASSERT_TRUE(bool(rp)) << what << ": " << llvm::toString(rp.takeError());
  rt::LoadedPlan loaded;
  rt::Status s = rt::load(rp->bytes, loaded);
  ASSERT_TRUE(s.ok()) << what << ": " << s.message();
  ASSERT_TRUE(loaded.partial && loaded.own == r) << what;
  EXPECT_EQ(loaded.proof, rt::Proof{}) << what;
  EXPECT_EQ(loaded.shape.chunks, whole.shape.chunks) << what;
  EXPECT_LE(loaded.shape.scratch, whole.shape.scratch) << what;
  // The whole plan's rank r, lowered the same way, field for field.
  const rt::LoadedPlan ref = compiler::toBytecodePlan(whole);
  rt::Program mine = *loaded.programOf(r), theirs = ref.programs[r];
  for (rt::Op &op : mine.ops)
    op.offset = 0;
  for (rt::Op &op : theirs.ops)
    op.offset = 0;
  EXPECT_EQ(mine, theirs) << what << " rank " << r;
  EXPECT_EQ(rp->ownOps, whole.programs[r].ops.size()) << what;
}

/// Proves `whole` as the drop-in needs it; true if it also has identical
/// results (allreduce).
bool expectProven(const sched::Algorithm &a, const ir::Plan &whole, const std::string &what) {
  compiler::VerifyOptions vo;
  compiler::VerifyResult r = compiler::verify(whole, vo);
  EXPECT_TRUE(r.proven()) << what << ": " << firstError(r);
  EXPECT_EQ(whole.shape.commutative, a.needsCommutative) << what;
  EXPECT_EQ(whole.shape.inPlace, a.inPlace) << what;
  return r.stats.identical;
}

/// One test per collective, so that ctest spreads them over the cores.
void proveUpToTheBound(ir::Collective c) {
  for (const sched::Algorithm &a : sched::algorithms()) {
    if (a.collective != c)
      continue;
    bool everIdentical = true;
    for (uint32_t p = 1; p <= dropin::ciProvenRanks; ++p) {
      const uint32_t roots = ir::hasRoot(c) ? p : 1;
      for (uint32_t root = 0; root < roots; ++root) {
        const std::string what = ir::name(c).str() + " " + a.name.str() + " p=" +
                                 std::to_string(p) + " root=" + std::to_string(root);
        lang::InstantiateOptions o = options(p, root);
        llvm::Expected<bool> ok = lang::accepts(*a.module, o);
        ASSERT_TRUE(bool(ok)) << what;
        if (!*ok)
          continue;
        llvm::Expected<ir::Plan> whole = dropin::compileWhole(*a.module, o, /*verifyEach=*/true);
        ASSERT_TRUE(bool(whole)) << what << ": " << llvm::toString(whole.takeError());
        const bool identical = expectProven(a, *whole, what);
        if (c == ir::Collective::Allreduce && !dropin::nonIdenticalAllreduce(a.name)) {
          EXPECT_TRUE(identical) << what << ": ranks may compute different results";
        }
        everIdentical = everIdentical && identical;
        // Every rank alone, at three roots.
        if (root == 0 || root == p / 2 || root == p - 1)
          for (uint32_t r = 0; r < p; ++r)
            expectRankEqualsWhole(a, *whole, root, r, what);
      }
    }
    if (c == ir::Collective::Allreduce) {
      EXPECT_EQ(everIdentical, !dropin::nonIdenticalAllreduce(a.name))
          << a.name.str() << ": nonIdenticalAllreduce is out of date";
    }
  }
}

TEST(RankCompile, AllreduceIsProvenUpToTheCiBoundAndEachRankEqualsTheWholePlan) {
  proveUpToTheBound(ir::Collective::Allreduce);
}
TEST(RankCompile, ReduceIsProvenUpToTheCiBoundAndEachRankEqualsTheWholePlan) {
  proveUpToTheBound(ir::Collective::Reduce);
}
TEST(RankCompile, ReduceScatterIsProvenUpToTheCiBoundAndEachRankEqualsTheWholePlan) {
  proveUpToTheBound(ir::Collective::ReduceScatterBlock);
}
TEST(RankCompile, ScansAreProvenUpToTheCiBoundAndEachRankEqualsTheWholePlan) {
  proveUpToTheBound(ir::Collective::Scan);
  proveUpToTheBound(ir::Collective::Exscan);
}
TEST(RankCompile, AllgatherAndBcastAreProvenUpToTheCiBoundAndEachRankEqualsTheWholePlan) {
  proveUpToTheBound(ir::Collective::Allgather);
  proveUpToTheBound(ir::Collective::Bcast);
}
TEST(RankCompile, AlltoallIsProvenUpToTheCiBoundAndEachRankEqualsTheWholePlan) {
  proveUpToTheBound(ir::Collective::Alltoall);
}
TEST(RankCompile, GatherAndScatterAreProvenUpToTheCiBoundAndEachRankEqualsTheWholePlan) {
  proveUpToTheBound(ir::Collective::Gather);
  proveUpToTheBound(ir::Collective::Scatter);
}
TEST(RankCompile, BarrierIsProvenUpToTheCiBoundAndEachRankEqualsTheWholePlan) {
  proveUpToTheBound(ir::Collective::Barrier);
}

/// Ranks 0, 1, the middle, the last, `root`, root + 1 and a few spread
/// between (a multiplicative hash), below p.
std::set<uint32_t> sampledRanks(uint32_t p, uint32_t root) {
  std::set<uint32_t> ranks{0, p / 2, p - 1, root};
  if (p > 1)
    ranks.insert({1, (root + 1) % p});
  for (uint32_t i = 1; i <= 6; ++i)
    ranks.insert(uint32_t((uint64_t(i) * 2654435761u) % p));
  return ranks;
}

TEST(RankCompile, SampledRanksEqualTheWholePlanAbove32Ranks) {
  for (const sched::Algorithm &a : sched::algorithms())
    for (uint32_t p : {dropin::ciProvenRanks + 1, 47u, 63u, 64u})
      for (uint32_t root : {0u, ir::hasRoot(a.collective) ? p - 1 : 0u}) {
        const std::string what = ir::name(a.collective).str() + " " + a.name.str() + " p=" +
                                 std::to_string(p) + " root=" + std::to_string(root);
        lang::InstantiateOptions o = options(p, root);
        if (!*lang::accepts(*a.module, o))
          continue;
        llvm::Expected<ir::Plan> whole = dropin::compileWhole(*a.module, o, false);
        ASSERT_TRUE(bool(whole)) << what << ": " << llvm::toString(whole.takeError());
        for (uint32_t r : sampledRanks(p, root))
          expectRankEqualsWhole(a, *whole, root, r, what);
        if (!ir::hasRoot(a.collective))
          break;
      }
}

TEST(RankCompile, SampledRanksAtLargePEqualTheWholePlan) {
  // The algorithms whose whole plan at p = 4096 compiles in seconds (ring's
  // has 33 M ops: p = 512), a root off 0 where there is one; ranks 0, 1, the
  // middle, the last and a few between.
  struct Case {
    ir::Collective c;
    const char *name;
    uint32_t p;
  };
  const Case cases[] = {
      {ir::Collective::Allreduce, "rabenseifner", 4096},
      {ir::Collective::Allreduce, "recursive_doubling", 4096},
      {ir::Collective::Allreduce, "binary_tree", 4096},
      {ir::Collective::Allreduce, "rabenseifner", 3000},
      {ir::Collective::Allreduce, "ring", 512},
      {ir::Collective::Reduce, "binomial", 4096},
      {ir::Collective::Reduce, "rabenseifner", 4096},
      {ir::Collective::Bcast, "binomial", 4096},
      {ir::Collective::Allgather, "bruck", 1000},
      {ir::Collective::Exscan, "recursive_doubling", 4096},
  };
  for (const Case &k : cases) {
    const sched::Algorithm &a = *sched::findAlgorithm(k.c, k.name);
    const uint32_t root = ir::hasRoot(k.c) ? k.p / 3 : 0;
    const std::string what = ir::name(k.c).str() + " " + k.name + " p=" + std::to_string(k.p);
    llvm::Expected<ir::Plan> whole =
        dropin::compileWhole(*a.module, options(k.p, root), /*verifyEach=*/false);
    ASSERT_TRUE(bool(whole)) << what << ": " << llvm::toString(whole.takeError());
    for (uint32_t r : sampledRanks(k.p, root))
      expectRankEqualsWhole(a, *whole, root, r, what);
  }
}

TEST(RankCompile, RefusesWhatTheAlgorithmRefuses) {
  const sched::Algorithm &swing = *sched::findAlgorithm(ir::Collective::Allreduce, "swing_latency");
  llvm::Expected<dropin::RankPlan> rp = dropin::compileRank(*swing.module, options(6, 0), 0);
  ASSERT_FALSE(bool(rp));
  EXPECT_NE(llvm::toString(rp.takeError()).find("require p == pof2(p) does not hold (p = 6)"),
            std::string::npos);
  const sched::Algorithm &ring = *sched::findAlgorithm(ir::Collective::Allreduce, "ring");
  rp = dropin::compileRank(*ring.module, options(4, 0), 4);
  ASSERT_FALSE(bool(rp));
  EXPECT_NE(llvm::toString(rp.takeError()).find("rank 4 is out of range (p = 4)"),
            std::string::npos);
}

TEST(RankCompile, CostsTheRanksNeighbourhoodNotThePlan) {
  // At p = 65536 the rank's partial plan holds its own program and its
  // peers' only: for recursive doubling lg p + 1 programs of about lg p ops.
  const sched::Algorithm &a = *sched::findAlgorithm(ir::Collective::Allreduce,
                                                    "recursive_doubling");
  llvm::Expected<dropin::RankPlan> rp = dropin::compileRank(*a.module, options(65536, 0), 12345);
  ASSERT_TRUE(bool(rp)) << llvm::toString(rp.takeError());
  EXPECT_EQ(rp->sections, 17u);
  EXPECT_LT(rp->ownOps + rp->contextOps, 17u * 64u);
  EXPECT_LT(rp->bytes.size(), 8192u);
}

} // namespace
