// tests/lang/SizeRefusalTest.cpp: a plan that cannot fit is refused before it is built.
//
// estimateOps samples ranks' programs; instantiate refuses on the estimate
// (OpLimitError with `estimate` set) before building anything, and still
// refuses on the exact count when the estimate missed (estimate 0).
#include "lang/Instantiator.h"
#include "lang/Parser.h"
#include "schedules/Generators.h"

#include <gtest/gtest.h>

namespace collc::lang {
namespace {

Module parseOk(const std::string &text) {
  llvm::Expected<Module> m = parse(text, "t.calgo");
  if (!m) {
    ADD_FAILURE() << llvm::toString(m.takeError());
    return Module{};
  }
  return std::move(*m);
}

/// The OpLimitError of `plan`, or a failure.
OpLimitError refusal(llvm::Expected<ir::Plan> plan) {
  OpLimitError got(0, "");
  if (plan) {
    ADD_FAILURE() << "instantiated, expected a refusal";
    return got;
  }
  bool seen = false;
  llvm::handleAllErrors(plan.takeError(), [&](const OpLimitError &e) {
    got = e;
    seen = true;
  });
  EXPECT_TRUE(seen);
  return got;
}

TEST(SizeRefusal, EstimateIsExactWhenRanksEmitAlike) {
  const sched::Algorithm *ring = sched::findAlgorithm(ir::Collective::Allreduce, "ring");
  ASSERT_NE(ring, nullptr);
  for (uint32_t p : {1u, 2u, 3u, 100u, 1000u}) {
    InstantiateOptions o;
    o.ranks = p;
    llvm::Expected<OpEstimate> e = estimateOps(*ring->module, o);
    ASSERT_TRUE(bool(e)) << llvm::toString(e.takeError());
    // 1 copy, p-1 send/recv_reduce pairs, p-1 send/recv pairs per rank.
    EXPECT_EQ(e->ops, uint64_t(p) * (4 * p - 3)) << "p = " << p;
    EXPECT_EQ(e->sampledRanks, std::min(p, 16u));
  }
  InstantiateOptions o;
  o.ranks = 100;
  EXPECT_EQ(instantiate(*ring->module, o)->numOps(), 100u * 397u);
}

TEST(SizeRefusal, HugeLibraryPlanIsRefusedOnItsEstimate) {
  sched::GenOptions g;
  g.ranks = 100000;
  llvm::Expected<ir::Plan> plan = sched::generate(ir::Collective::Allreduce, "ring", g);
  ASSERT_FALSE(bool(plan));
  EXPECT_EQ(llvm::toString(plan.takeError()),
            "allreduce ring for 100000 ranks would have about 4.00e+10 ops (about 2560.0 GB in "
            "memory); refused before generating (the limit is --max-ops 16777216)");
  const sched::Algorithm *ring = sched::findAlgorithm(ir::Collective::Allreduce, "ring");
  InstantiateOptions o;
  o.ranks = 100000;
  o.maxOps = sched::defaultMaxOps;
  OpLimitError e = refusal(instantiate(*ring->module, o));
  EXPECT_EQ(e.estimate, 39999700000u);
  EXPECT_EQ(e.memoryLimit, 0u);
  EXPECT_EQ(e.limit, sched::defaultMaxOps);
  // A limit above what the process may use is refused for memory instead.
  o.maxOps = UINT64_MAX / 2;
  e = refusal(instantiate(*ring->module, o));
  EXPECT_EQ(e.estimate, 39999700000u);
  EXPECT_EQ(e.memoryLimit, availableMemory());
  EXPECT_NE(e.message.find("more than the "), std::string::npos) << e.message;
}

TEST(SizeRefusal, LimitNearTheEstimateIsLeftToTheExactCount) {
  // 100 ranks of 397 ops: 39700. Up to twice the limit the plan is built
  // and counted; only past the limit is it refused, with no estimate.
  const sched::Algorithm *ring = sched::findAlgorithm(ir::Collective::Allreduce, "ring");
  InstantiateOptions o;
  o.ranks = 100;
  o.maxOps = 39700;
  EXPECT_TRUE(bool(instantiate(*ring->module, o)));
  o.maxOps = 39699;
  EXPECT_EQ(refusal(instantiate(*ring->module, o)).estimate, 0u);
  o.maxOps = 39700 / 2;
  EXPECT_EQ(refusal(instantiate(*ring->module, o)).estimate, 0u);
  o.maxOps = 39700 / 2 - 1;
  EXPECT_EQ(refusal(instantiate(*ring->module, o)).estimate, 39700u);
}

TEST(SizeRefusal, EstimateThatMissesStillMeetsTheExactLimit) {
  // Only ranks 1 and 2 emit ops, and the sample at p = 100 (0, 99, 50, 25,
  // 75, ...) includes neither: the estimate is 0, the count is not.
  Module m = parseOk("algorithm t\ncollective allreduce\nchunks 1\n"
                     "if r == 1 {\n  for s in 0..5000 {\n    send out[0] to 2\n  }\n}\n"
                     "if r == 2 {\n  for s in 0..5000 {\n    recv out[0] from 1\n  }\n}\n");
  InstantiateOptions o;
  o.ranks = 100;
  llvm::Expected<OpEstimate> e = estimateOps(m, o);
  ASSERT_TRUE(bool(e)) << llvm::toString(e.takeError());
  EXPECT_EQ(e->ops, 0u);
  o.maxOps = 9999;
  OpLimitError r = refusal(instantiate(m, o));
  EXPECT_EQ(r.estimate, 0u);
  EXPECT_EQ(r.message, "t.calgo:11:5: error: more than 9999 ops (r = 2, p = 100, s = 4999)\n"
                       "      recv out[0] from 1\n"
                       "      ^");
  o.maxOps = 10000;
  EXPECT_TRUE(bool(instantiate(m, o)));
}

TEST(SizeRefusal, OneRankAloneOverTheLimitIsRefusedWhileSampling) {
  const sched::Algorithm *ring = sched::findAlgorithm(ir::Collective::Allreduce, "ring");
  InstantiateOptions o;
  o.ranks = 1000;
  o.maxOps = 1000;
  llvm::Expected<OpEstimate> e = estimateOps(*ring->module, o);
  ASSERT_FALSE(bool(e));
  bool limited = false;
  llvm::handleAllErrors(e.takeError(), [&](const OpLimitError &x) {
    limited = true;
    EXPECT_EQ(x.limit, 1000u);
    EXPECT_NE(x.message.find("more than 1000 ops (r = 0, p = 1000"), std::string::npos)
        << x.message;
  });
  EXPECT_TRUE(limited);
}

} // namespace
} // namespace collc::lang
