// tests/ir/PlanReaderFuzzTest.cpp: whatever text the reader is given, it
// returns a well-formed plan or an error with a position — never a crash,
// never a malformed plan.
#include "ir/PlanBuilder.h"
#include "ir/PlanIO.h"

#include <gtest/gtest.h>

#include <random>

using namespace collc;

namespace {

std::string sampleText() {
  ir::Shape s;
  s.ranks = 3;
  s.chunks = 3;
  s.scratch = 2;
  ir::PlanBuilder b(s, "sample");
  for (uint32_t r = 0; r < 3; ++r)
    b.copy(r, ir::out(0, 3), ir::in(0, 3));
  b.nextStep();
  b.send(0, 1, ir::out(0));
  b.recvReduce(1, 0, ir::out(0), ir::Order::OtherFirst);
  b.recv(2, 1, ir::tmp(1));
  b.send(1, 2, ir::in(1));
  b.nextStep();
  b.reduceInto(2, ir::in(2), ir::tmp(1), ir::tmp(0), ir::Order::BufFirst);
  uint32_t i = b.copy(2, ir::out(2), ir::tmp(0));
  b.setAfter(2, i, {0, 2});
  return ir::printPlan(b.take());
}

/// Every op of a parsed plan satisfies the IR's invariants.
void expectWellFormed(const ir::Plan &p, const std::string &text) {
  ASSERT_FALSE(ir::checkShape(p.shape)) << text;
  ASSERT_EQ(p.programs.size(), p.shape.ranks) << text;
  for (uint32_t r = 0; r < p.shape.ranks; ++r)
    for (uint32_t i = 0; i < p.programs[r].ops.size(); ++i)
      ASSERT_FALSE(ir::checkOp(p.shape, r, p.programs[r].ops, i)) << text;
  std::string printed = ir::printPlan(p);
  llvm::Expected<ir::Plan> again = ir::parsePlan(printed, "again.yaml");
  ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError()) << "\n" << printed;
  EXPECT_EQ(ir::printPlan(*again), printed);
}

TEST(PlanReaderFuzz, RandomEditsYieldAPlanOrAPositionedError) {
  const std::string base = sampleText();
  const std::string alphabet = "{}[]:,-#\"'\n 0123456789abcdefghijklmnopqrstuvwxyz_&*!|>%@`\t";
  std::mt19937 rng(12345);
  size_t accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text = base;
    int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % (text.size() + 1);
      char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
      case 0:
        text.insert(text.begin() + long(at), c);
        break;
      case 1:
        if (at < text.size())
          text[at] = c;
        break;
      default:
        if (at < text.size())
          text.erase(text.begin() + long(at));
        break;
      }
    }
    llvm::Expected<ir::Plan> p = ir::parsePlan(text, "fuzz.yaml");
    if (!p) {
      std::string err = llvm::toString(p.takeError());
      EXPECT_EQ(err.rfind("fuzz.yaml:", 0), 0u) << err;
      EXPECT_TRUE(err.find(": syntax: ") != std::string::npos ||
                  err.find(": invalid: ") != std::string::npos)
          << err;
      continue;
    }
    ++accepted;
    expectWellFormed(*p, text);
  }
  // Some edits are harmless (comments, spaces), most are not.
  EXPECT_GT(accepted, 10u);
  EXPECT_LT(accepted, 2900u);
}

TEST(PlanReaderFuzz, RefusesDeepNestingWithoutOverflowingTheStack) {
  std::string text = "format: " + std::string(200000, '[');
  llvm::Expected<ir::Plan> p = ir::parsePlan(text, "deep.yaml");
  ASSERT_FALSE(p);
  EXPECT_NE(llvm::toString(p.takeError()).find("syntax: collections nested too deeply"),
            std::string::npos);
}

} // namespace
