// tests/ir/PlanRoundTripTest.cpp: the printer is canonical and the reader
// inverts it.
#include "ir/PlanBuilder.h"
#include "ir/PlanIO.h"

#include <gtest/gtest.h>

using namespace collc;

namespace {

ir::Plan sample(llvm::StringRef algorithm) {
  ir::Shape s;
  s.collective = ir::Collective::Reduce;
  s.ranks = 3;
  s.root = 2;
  s.chunks = 4;
  s.commutative = false;
  s.inPlace = true;
  ir::PlanBuilder b(s, algorithm);
  b.copy(2, ir::out(0, 4), ir::in(0, 4));
  b.copy(0, ir::tmp(1, 2), ir::in(2, 2));
  b.setStep(3);
  b.send(0, 2, ir::tmp(1, 2));
  b.recvReduce(2, 0, ir::out(2, 2), ir::Order::OtherFirst);
  b.reduce(1, ir::tmp(0), ir::in(3), ir::Order::BufFirst);
  uint32_t x = b.recv(1, 0, ir::tmp(4));
  b.setAfter(1, x, {0});
  return b.take();
}

TEST(PlanRoundTrip, PrintsTheCanonicalText) {
  EXPECT_EQ(ir::printPlan(sample("my algo")),
            "format: collc-plan/1\n"
            "collective: reduce\n"
            "algorithm: \"my algo\"\n"
            "ranks: 3\n"
            "root: 2\n"
            "chunks: 4\n"
            "scratch: 5\n"
            "commutative: false\n"
            "in_place: true\n"
            "programs:\n"
            "  0:\n"
            "    - {step: 0, op: copy, buf: tmp, chunk: 1, count: 2, src: in, src_chunk: 2}\n"
            "    - {step: 3, op: send, to: 2, buf: tmp, chunk: 1, count: 2}\n"
            "  1:\n"
            "    - {step: 3, op: reduce, buf: tmp, chunk: 0, src: in, src_chunk: 3, order: "
            "buf_first}\n"
            "    - {after: [0], op: recv, from: 0, buf: tmp, chunk: 4}\n"
            "  2:\n"
            "    - {step: 0, op: copy, buf: out, chunk: 0, count: 4, src: in}\n"
            "    - {step: 3, op: recv_reduce, from: 0, buf: out, chunk: 2, count: 2, order: "
            "recv_first}\n");
}

TEST(PlanRoundTrip, ParseInvertsPrint) {
  for (const char *name : {"ring", "my algo", "quote\"and\\back", "true", "tab\there", ""}) {
    ir::Plan p = sample(name);
    std::string text = ir::printPlan(p);
    llvm::Expected<ir::Plan> q = ir::parsePlan(text, "t.yaml");
    ASSERT_TRUE(bool(q)) << name << ": " << llvm::toString(q.takeError());
    EXPECT_TRUE(*q == p) << name;
    EXPECT_EQ(ir::printPlan(*q), text) << name;
  }
}

TEST(PlanRoundTrip, KeepsThreeAddressForms) {
  ir::Shape s;
  s.ranks = 2;
  s.chunks = 3;
  s.scratch = 1;
  ir::PlanBuilder b(s, "3addr");
  b.recvReduceInto(0, 1, ir::in(0), ir::out(0), ir::Order::BufFirst);
  b.reduceInto(1, ir::in(2), ir::tmp(0), ir::out(0), ir::Order::OtherFirst);
  ir::Plan p = b.take();
  std::string text = ir::printPlan(p);
  EXPECT_NE(text.find("{step: 0, op: recv_reduce, from: 1, buf: in, chunk: 0, dst: out, order: "
                      "buf_first}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("{step: 0, op: reduce, buf: in, chunk: 2, src: tmp, src_chunk: 0, dst: "
                      "out, dst_chunk: 0, order: src_first}"),
            std::string::npos)
      << text;
  llvm::Expected<ir::Plan> q = ir::parsePlan(text, "t.yaml");
  ASSERT_TRUE(bool(q)) << llvm::toString(q.takeError());
  EXPECT_TRUE(*q == p);
  EXPECT_EQ(ir::printPlan(*q), text);
}

TEST(PlanRoundTrip, PrintsEmptyProgramsAndNoRootForAllreduce) {
  ir::Shape s;
  s.ranks = 2;
  ir::PlanBuilder b(s, "x");
  b.copy(0, ir::out(0), ir::in(0));
  std::string text = ir::printPlan(b.take());
  EXPECT_EQ(text.find("root:"), std::string::npos);
  EXPECT_NE(text.find("  1: []\n"), std::string::npos);
}

} // namespace
