// tests/ir/PlanBuilderTest.cpp: the builder generators write plans with.
#include "ir/PlanBuilder.h"

#include <gtest/gtest.h>

using namespace collc;

namespace {

ir::Shape twoRanks() {
  ir::Shape s;
  s.ranks = 2;
  s.chunks = 2;
  return s;
}

TEST(PlanBuilder, GivesOpsTheCurrentStep) {
  ir::PlanBuilder b(twoRanks(), "t");
  EXPECT_EQ(b.copy(0, ir::out(0, 2), ir::in(0, 2)), 0u);
  b.nextStep();
  EXPECT_EQ(b.send(0, 1, ir::out(1)), 1u);
  EXPECT_EQ(b.recvReduce(1, 0, ir::out(1), ir::Order::BufFirst), 0u);
  ir::Plan p = b.take();
  ASSERT_EQ(p.programs.size(), 2u);
  const ir::Op &c = p.programs[0].ops[0];
  EXPECT_EQ(c.kind, ir::OpKind::Copy);
  EXPECT_EQ(c.deps, ir::DepKind::Step);
  EXPECT_EQ(c.step, 0u);
  EXPECT_EQ(c.count, 2u);
  const ir::Op &s = p.programs[0].ops[1];
  EXPECT_EQ(s.step, 1u);
  EXPECT_EQ(s.peer, 1u);
  EXPECT_EQ(p.programs[1].ops[0].order, ir::Order::BufFirst);
  EXPECT_EQ(p.algorithm, "t");
}

TEST(PlanBuilder, RaisesScratchToTheSlotsUsed) {
  ir::PlanBuilder b(twoRanks(), "t");
  b.recv(0, 1, ir::tmp(2, 3));
  b.reduce(1, ir::out(0), ir::tmp(6), ir::Order::OtherFirst);
  EXPECT_EQ(b.take().shape.scratch, 7u);
}

TEST(PlanBuilder, SetAfterReplacesDependencies) {
  ir::PlanBuilder b(twoRanks(), "t");
  b.copy(0, ir::out(0), ir::in(0));
  b.copy(0, ir::out(1), ir::in(1));
  uint32_t s = b.send(0, 1, ir::out(0, 2));
  b.setAfter(0, s, {1, 0, 1});
  b.setAfter(0, 0, {});
  ir::Plan p = b.take();
  EXPECT_EQ(p.programs[0].ops[2].deps, ir::DepKind::After);
  EXPECT_EQ(std::vector<uint32_t>(p.programs[0].ops[2].after.begin(),
                                  p.programs[0].ops[2].after.end()),
            (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(p.programs[0].ops[0].deps, ir::DepKind::None);
}

} // namespace
