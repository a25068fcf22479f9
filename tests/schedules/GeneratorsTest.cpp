// tests/schedules/GeneratorsTest.cpp: every generator is well-formed, correct and round-trips.
//
// Each registered generator is swept over rank counts 1..17, 24, 31, 32, 33,
// 64, 100 (and roots 0, p/2, p-1 for reduce) and its plans are run by the
// reference interpreter (tests/support): as token sequences for plans that
// declare `commutative: false`, as multisets for the others, with in and out
// separate and aliased.
#include "schedules/Generators.h"

#include "ir/PlanIO.h"
#include "tests/support/ReferenceInterpreter.h"

#include "llvm/Support/Error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

namespace collc::sched {

/// gtest prints test parameters with this: "allreduce ring", not an address.
void PrintTo(const Algorithm *a, std::ostream *os) {
  *os << ir::name(a->collective).str() << ' ' << a->name.str();
}

namespace {

using test::RefErrorKind;
using test::RefOptions;
using test::runReference;

const uint32_t rankCounts[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                               13, 14, 15, 16, 17, 24, 31, 32, 33, 64, 100};

std::vector<uint32_t> rootsFor(ir::Collective c, uint32_t p) {
  if (!ir::hasRoot(c))
    return {0};
  std::vector<uint32_t> roots = {0, p / 2, p - 1};
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  return roots;
}

/// One plan of the sweep, with a label for failure messages.
struct Case {
  std::string label;
  ir::Plan plan;
};

ir::Plan build(const Algorithm &a, uint32_t ranks, uint32_t root) {
  llvm::Expected<ir::Plan> plan = generate(a.collective, a.name, GenOptions{ranks, root});
  if (!plan) {
    ADD_FAILURE() << llvm::toString(plan.takeError());
    return ir::Plan{};
  }
  return std::move(*plan);
}

std::vector<Case> sweep(const Algorithm &a) {
  std::vector<Case> cases;
  for (uint32_t p : rankCounts)
    for (uint32_t root : rootsFor(a.collective, p))
      if (a.accepts(GenOptions{p, root})) // skip the p its `require` refuses
        cases.push_back({(ir::name(a.collective) + " " + a.name).str() +
                           " ranks=" + std::to_string(p) + " root=" + std::to_string(root),
                       build(a, p, root)});
  return cases;
}

RefOptions optionsFor(const ir::Plan &plan) {
  RefOptions o;
  o.compareAsMultiset = plan.shape.commutative;
  // Swing's latency-optimal variant is the one library plan whose ranks build
  // different trees (its partner groups do not nest; swing_latency.calgo).
  o.requireIdenticalTrees = plan.algorithm != "swing_latency";
  return o;
}

/// The algorithms this suite covers: every registered one.
std::vector<const Algorithm *> allAlgorithms() {
  std::vector<const Algorithm *> v;
  for (const Algorithm &a : algorithms())
    v.push_back(&a);
  return v;
}

class EveryGenerator : public ::testing::TestWithParam<const Algorithm *> {};

TEST_P(EveryGenerator, IsWellFormedForEveryRankCountAndRoot) {
  const Algorithm &a = *GetParam();
  for (const Case &c : sweep(a)) {
    SCOPED_TRACE(c.label);
    const ir::Shape &s = c.plan.shape;
    ASSERT_FALSE(ir::checkShape(s).has_value()) << ir::checkShape(s)->message;
    EXPECT_EQ(s.collective, a.collective);
    EXPECT_EQ(s.commutative, a.needsCommutative);
    EXPECT_EQ(s.inPlace, a.inPlace);
    // Every allreduce and reduce of the library also works in place.
    if (s.collective == ir::Collective::Allreduce || s.collective == ir::Collective::Reduce) {
      EXPECT_TRUE(s.inPlace);
    }
    EXPECT_EQ(c.plan.algorithm, a.name.str());
    ASSERT_EQ(c.plan.programs.size(), s.ranks);
    for (uint32_t r = 0; r < s.ranks; ++r) {
      const auto &ops = c.plan.programs[r].ops;
      for (uint32_t i = 0; i < ops.size(); ++i) {
        std::optional<std::string> e = ir::checkOp(s, r, ops, i);
        EXPECT_FALSE(e.has_value()) << "rank " << r << ", op " << i << ": " << *e;
      }
    }
  }
}

TEST_P(EveryGenerator, ComputesItsCollectiveForEveryRankCountAndRoot) {
  for (const Case &c : sweep(*GetParam())) {
    SCOPED_TRACE(c.label);
    test::RefOutcome out = runReference(c.plan, optionsFor(c.plan));
    EXPECT_TRUE(out.ok) << out.error;
    EXPECT_EQ(out.opsCompleted, c.plan.numOps());
  }
}

TEST_P(EveryGenerator, IsCorrectWithInAndOutAliased) {
  if (!GetParam()->inPlace)
    GTEST_SKIP() << "the algorithm does not claim in-place use";
  for (const Case &c : sweep(*GetParam())) {
    SCOPED_TRACE(c.label);
    RefOptions o = optionsFor(c.plan);
    o.aliasInOut = true;
    test::RefOutcome out = runReference(c.plan, o);
    EXPECT_TRUE(out.ok) << out.error;
  }
}

TEST_P(EveryGenerator, IsCorrectWhenReadyOpsArePostedNewestFirst) {
  for (const Case &c : sweep(*GetParam())) {
    SCOPED_TRACE(c.label);
    RefOptions o = optionsFor(c.plan);
    o.readyOrder = test::ReadyOrder::Lifo;
    test::RefOutcome out = runReference(c.plan, o);
    EXPECT_TRUE(out.ok) << out.error;
  }
}

// The allreduce and reduce algorithms start by copying their input and never
// read it again (what copy elimination then removes).
TEST_P(EveryGenerator, ReadsInOnlyInItsFirstCopy) {
  const ir::Collective coll = GetParam()->collective;
  if (coll != ir::Collective::Allreduce && coll != ir::Collective::Reduce)
    GTEST_SKIP() << "only the allreduce and reduce algorithms follow this pattern";
  for (const Case &c : sweep(*GetParam())) {
    SCOPED_TRACE(c.label);
    for (uint32_t r = 0; r < c.plan.shape.ranks; ++r) {
      const auto &ops = c.plan.programs[r].ops;
      for (uint32_t i = 0; i < ops.size(); ++i) {
        const ir::Op &op = ops[i];
        const bool readsIn = (op.buf == ir::Buffer::In) ||
                             (ir::hasSrc(op.kind) && op.src == ir::Buffer::In);
        if (i == 0) {
          EXPECT_EQ(op.kind, ir::OpKind::Copy) << "rank " << r;
          EXPECT_EQ(op.src, ir::Buffer::In) << "rank " << r;
          EXPECT_EQ(op.count, c.plan.shape.chunks) << "rank " << r;
        } else {
          EXPECT_FALSE(readsIn) << "rank " << r << ", op " << i << ": " << ir::describe(op);
        }
      }
    }
  }
}

TEST_P(EveryGenerator, RoundTripsThroughPlanText) {
  for (const Case &c : sweep(*GetParam())) {
    SCOPED_TRACE(c.label);
    const std::string text = ir::printPlan(c.plan);
    llvm::Expected<ir::Plan> parsed = ir::parsePlan(text, c.label);
    ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
    EXPECT_TRUE(*parsed == c.plan);
    EXPECT_EQ(ir::printPlan(*parsed), text);
  }
}

std::string paramName(const ::testing::TestParamInfo<const Algorithm *> &info) {
  return (ir::name(info.param->collective) + "_" + info.param->name).str();
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryGenerator, ::testing::ValuesIn(allAlgorithms()),
                         paramName);

// --- specific properties ---------------------------------------------------------------

TEST(Generators, RegistryListsTheAlgorithmsInTheirFixedOrder) {
  std::vector<std::string> got;
  for (const Algorithm &a : algorithms())
    got.push_back((ir::name(a.collective) + " " + a.name).str());
  const std::vector<std::string> expected = {
      "allreduce binary_tree",     "allreduce recursive_doubling",
      "allreduce rabenseifner",    "allreduce binary_blocks",
      "allreduce ring",            "allreduce recursive_multiplying",
      "allreduce swing_latency",   "allreduce swing_bandwidth",
      "allreduce chain",           "allreduce linear",
      "allreduce two_level",       "allreduce multi_leader",
      "allreduce single_leader",   "allreduce n_level",
      "reduce binomial",
      "reduce binary_tree",        "reduce rabenseifner",
      "reduce knomial",            "reduce two_level",
      "reduce_scatter_block ring",
      "reduce_scatter_block recursive_halving", "reduce_scatter_block chain",
      "reduce_scatter_block pairwise",
      "scan chain",                "scan recursive_doubling",
      "scan brent_kung",           "exscan chain",
      "exscan recursive_doubling", "exscan brent_kung",
      "allgather ring",            "allgather recursive_doubling",
      "allgather bruck",           "allgather pairwise",
      "bcast binomial",
      "bcast scatter_allgather",   "bcast chain",
      "alltoall pairwise",         "alltoall bruck",
      "alltoall linear",           "gather binomial",
      "gather linear",             "scatter binomial",
      "scatter linear",            "barrier dissemination",
      "barrier tree"};
  EXPECT_EQ(got, expected);
}

TEST(Generators, RingIsCorrectForEveryRankCount) {
  const Algorithm *ring = findAlgorithm(ir::Collective::Allreduce, "ring");
  ASSERT_NE(ring, nullptr);
  for (uint32_t p : rankCounts) {
    SCOPED_TRACE(p);
    RefOptions o;
    o.compareAsMultiset = true;
    o.requireIdenticalTrees = true;
    test::RefOutcome out = runReference(build(*ring, p, 0), o);
    EXPECT_TRUE(out.ok) << out.error;
  }
}

TEST(Generators, RingIsRefusedForNonCommutativeOperationsFromThreeRanks) {
  const Algorithm *ring = findAlgorithm(ir::Collective::Allreduce, "ring");
  ASSERT_NE(ring, nullptr);
  for (uint32_t p : rankCounts) {
    if (p < 3)
      continue;
    SCOPED_TRACE(p);
    RefOptions asSequences; // compareAsMultiset = false
    test::RefOutcome out = runReference(build(*ring, p, 0), asSequences);
    EXPECT_FALSE(out.ok);
    EXPECT_EQ(out.kind, RefErrorKind::Order) << out.error;
  }
}

TEST(Generators, ReducePlansAreCorrectForEveryRoot) {
  for (const Algorithm &a : algorithms()) {
    if (a.collective != ir::Collective::Reduce)
      continue;
    for (uint32_t p = 1; p <= 12; ++p)
      for (uint32_t root = 0; root < p; ++root) {
        SCOPED_TRACE(a.name.str() + " ranks=" + std::to_string(p) +
                     " root=" + std::to_string(root));
        ir::Plan plan = build(a, p, root);
        for (bool alias : {false, true}) {
          RefOptions o = optionsFor(plan);
          o.aliasInOut = alias;
          test::RefOutcome out = runReference(plan, o);
          EXPECT_TRUE(out.ok) << out.error;
        }
      }
  }
}

TEST(Generators, ReducePlansGiveOnlyTheRootAnOutBuffer) {
  // checkOp would reject any use of out off the root; here: the root writes it.
  for (const Algorithm &a : algorithms()) {
    if (a.collective != ir::Collective::Reduce)
      continue;
    ir::Plan plan = build(a, 7, 3);
    for (uint32_t r = 0; r < 7; ++r)
      for (const ir::Op &op : plan.programs[r].ops)
        EXPECT_TRUE(op.buf != ir::Buffer::Out || r == 3)
            << a.name.str() << " rank " << r << ": " << ir::describe(op);
  }
}

TEST(Generators, RabenseifnerCutsTheVectorIntoTheLargestPowerOfTwoChunks) {
  for (const char *algo : {"rabenseifner"})
    for (ir::Collective c : {ir::Collective::Allreduce, ir::Collective::Reduce}) {
      const Algorithm *a = findAlgorithm(c, algo);
      ASSERT_NE(a, nullptr);
      EXPECT_EQ(build(*a, 1, 0).shape.chunks, 1u);
      EXPECT_EQ(build(*a, 7, 0).shape.chunks, 4u);
      EXPECT_EQ(build(*a, 8, 0).shape.chunks, 8u);
      EXPECT_EQ(build(*a, 100, 0).shape.chunks, 64u);
    }
  const Algorithm *blocks = findAlgorithm(ir::Collective::Allreduce, "binary_blocks");
  ASSERT_NE(blocks, nullptr);
  EXPECT_EQ(build(*blocks, 100, 0).shape.chunks, 64u); // 100 = 64 + 32 + 4
}

TEST(Generators, RecursiveDoublingUsesOneScratchSlotAndNoOtherPlanNeedsMoreThanTheVector) {
  for (const Algorithm &a : algorithms()) {
    if (a.collective != ir::Collective::Allreduce && a.collective != ir::Collective::Reduce)
      continue; // their scratch is in their files' cost comments
    const GenOptions o{16, a.collective == ir::Collective::Reduce ? 6u : 0u};
    ir::Plan plan = build(a, o.ranks, o.root);
    if (a.name == "recursive_doubling" || a.name == "swing_latency" ||
        a.name == "recursive_multiplying") // one slot for the partner's vector (k = 2)
      EXPECT_EQ(plan.shape.scratch, 1u);
    else if (a.name == "knomial") // the accumulator and k - 1 = 1 child
      EXPECT_EQ(plan.shape.scratch, 2u);
    else if (a.name == "two_level" && a.collective == ir::Collective::Allreduce)
      EXPECT_EQ(plan.shape.scratch, 1u); // the partner's slice, swapped within the node
    else if (a.name == "multi_leader") // flat: the pairwise reduce-scatter's tmp slot
      EXPECT_EQ(plan.shape.scratch, 1u);
    else if (a.name == "single_leader") // the binomial reduce's accumulator off the leader
      EXPECT_EQ(plan.shape.scratch, 1u);
    else if (a.name == "two_level") // a leader's vector, and the node reduce's accumulator
      EXPECT_EQ(plan.shape.scratch, 2 * plan.shape.chunks); // (runs' tmp is disjoint)
    else if (a.collective == ir::Collective::Allreduce)
      EXPECT_EQ(plan.shape.scratch, 0u) << a.name.str();
    else
      EXPECT_EQ(plan.shape.scratch, plan.shape.chunks) << a.name.str();
  }
}

TEST(Generators, OrderPreservingAllreducePlansBuildOneReductionTreeOnEveryRank) {
  // With sequences (no operand swapping allowed) the trees must match exactly.
  for (const char *algo : {"binary_tree", "recursive_doubling"}) {
    const Algorithm *a = findAlgorithm(ir::Collective::Allreduce, algo);
    ASSERT_NE(a, nullptr);
    for (uint32_t p : rankCounts) {
      SCOPED_TRACE(std::string(algo) + " ranks=" + std::to_string(p));
      RefOptions o;
      o.requireIdenticalTrees = true;
      test::RefOutcome out = runReference(build(*a, p, 0), o);
      EXPECT_TRUE(out.ok) << out.error;
    }
  }
}

} // namespace
} // namespace collc::sched
