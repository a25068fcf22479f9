// tests/ir/DepGraphTest.cpp: the dependency rules of docs/plan-format.md, made explicit.
#include "ir/Plan.h"

#include <gtest/gtest.h>

using namespace collc;

namespace {

ir::Op stepOp(uint32_t step) {
  ir::Op op;
  op.deps = ir::DepKind::Step;
  op.step = step;
  return op;
}
ir::Op afterOp(std::initializer_list<uint32_t> deps) {
  ir::Op op;
  op.deps = ir::DepKind::After;
  op.after.assign(deps.begin(), deps.end());
  return op;
}
std::vector<uint32_t> preds(const ir::DepGraph &g, uint32_t i) {
  auto p = g.preds(i);
  return std::vector<uint32_t>(p.begin(), p.end());
}

TEST(DepGraph, StepOpsDependOnEveryOpOfTheNearestLowerStep) {
  std::vector<ir::Op> ops = {stepOp(0), stepOp(0), stepOp(1), stepOp(1), stepOp(4)};
  ir::DepGraph g(ops);
  EXPECT_EQ(preds(g, 0), std::vector<uint32_t>{});
  EXPECT_EQ(preds(g, 1), std::vector<uint32_t>{});
  EXPECT_EQ(preds(g, 2), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(preds(g, 3), (std::vector<uint32_t>{0, 1}));
  // Step 4 follows step 1 directly: gaps do not matter.
  EXPECT_EQ(preds(g, 4), (std::vector<uint32_t>{2, 3}));
}

TEST(DepGraph, StepGroupsIgnoreOpsWithoutSteps) {
  std::vector<ir::Op> ops = {stepOp(0), ir::Op{}, afterOp({1}), stepOp(1)};
  ir::DepGraph g(ops);
  EXPECT_EQ(preds(g, 1), std::vector<uint32_t>{});
  EXPECT_EQ(preds(g, 2), std::vector<uint32_t>{1});
  EXPECT_EQ(preds(g, 3), std::vector<uint32_t>{0});
}

TEST(DepGraph, AfterListsAreTakenAsGiven) {
  std::vector<ir::Op> ops = {ir::Op{}, ir::Op{}, afterOp({0}), afterOp({2, 1})};
  ir::DepGraph g(ops);
  EXPECT_EQ(preds(g, 3), (std::vector<uint32_t>{2, 1}));
  EXPECT_EQ(g.size(), 4u);
}

TEST(Buffers, LayoutFollowsTheCollective) {
  ir::Shape s;
  s.ranks = 4;
  s.chunks = 8;
  s.scratch = 3;
  s.collective = ir::Collective::Allreduce;
  EXPECT_EQ(ir::bufferSlots(s, 2, ir::Buffer::In), 8u);
  EXPECT_EQ(ir::bufferSlots(s, 2, ir::Buffer::Out), 8u);
  EXPECT_EQ(ir::bufferSlots(s, 2, ir::Buffer::Tmp), 3u);
  s.collective = ir::Collective::Reduce;
  s.root = 1;
  EXPECT_EQ(ir::bufferSlots(s, 1, ir::Buffer::Out), 8u);
  EXPECT_EQ(ir::bufferSlots(s, 2, ir::Buffer::Out), std::nullopt);
  s.root = 0;
  s.collective = ir::Collective::ReduceScatterBlock;
  EXPECT_EQ(ir::bufferSlots(s, 2, ir::Buffer::Out), 2u);
  EXPECT_EQ(ir::outChunk(s, 2, 1), 5u);
  s.collective = ir::Collective::Allgather;
  EXPECT_EQ(ir::bufferSlots(s, 3, ir::Buffer::In), 2u);
  EXPECT_EQ(ir::inChunk(s, 3, 1), 7u);
  EXPECT_EQ(ir::bufferSlots(s, 3, ir::Buffer::Out), 8u);
  s.collective = ir::Collective::Bcast;
  EXPECT_EQ(ir::bufferSlots(s, 0, ir::Buffer::In), std::nullopt);
}

TEST(Describe, NamesOpsAndRanges) {
  ir::Op op;
  op.kind = ir::OpKind::RecvReduce;
  op.peer = 1;
  op.buf = ir::Buffer::Out;
  op.chunk = 1;
  EXPECT_EQ(ir::describe(op), "recv_reduce out[1] from 1");
  op.kind = ir::OpKind::Copy;
  op.count = 3;
  op.src = ir::Buffer::In;
  op.srcChunk = 0;
  EXPECT_EQ(ir::describe(op), "copy out[1..3] from in[0..2]");
}

} // namespace
