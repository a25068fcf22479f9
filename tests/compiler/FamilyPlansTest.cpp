// tests/compiler/FamilyPlansTest.cpp: the verifier proves the test plans of
// reduce_scatter_block, scan, exscan, allgather and bcast
// (tests/support/FamilyPlans.h) for every rank count swept, and its result
// conditions catch what is wrong with them.
#include "compiler/Verifier.h"
#include "tests/support/FamilyPlans.h"

#include <gtest/gtest.h>

using namespace collc;

namespace {

std::vector<uint32_t> rankCounts() {
  std::vector<uint32_t> ps;
  for (uint32_t p = 1; p <= 17; ++p)
    ps.push_back(p);
  for (uint32_t p : {24u, 31u, 32u, 33u, 64u})
    ps.push_back(p);
  return ps;
}

std::string firstError(const compiler::VerifyResult &r) {
  return r.diagnostics.empty() ? "" : compiler::toString(r.diagnostics.front());
}

compiler::VerifyResult prove(const ir::Plan &plan, bool noncommutative = false) {
  compiler::VerifyOptions o;
  o.noncommutative = noncommutative;
  return compiler::verify(plan, o);
}

TEST(FamilyPlans, AreProvenForEveryRankCount) {
  for (uint32_t p : rankCounts()) {
    compiler::VerifyResult r = prove(testplans::ringReduceScatter(p));
    EXPECT_TRUE(r.proven()) << "reduce_scatter_block p=" << p << ": " << firstError(r);
    for (bool ex : {false, true}) {
      r = prove(testplans::chainScan(p, ex), /*noncommutative=*/true);
      EXPECT_TRUE(r.proven()) << (ex ? "exscan" : "scan") << " p=" << p << ": " << firstError(r);
    }
    r = prove(testplans::ringAllgather(p));
    EXPECT_TRUE(r.proven()) << "allgather p=" << p << ": " << firstError(r);
    for (uint32_t root : {0u, p / 2, p - 1}) {
      r = prove(testplans::binomialBcast(p, root));
      EXPECT_TRUE(r.proven()) << "bcast p=" << p << " root " << root << ": " << firstError(r);
    }
  }
}

TEST(FamilyPlans, TheRingReduceScatterNeedsACommutativeOperation) {
  compiler::VerifyResult r = prove(testplans::ringReduceScatter(5), /*noncommutative=*/true);
  ASSERT_FALSE(r.proven());
  EXPECT_EQ(r.diagnostics.front().cls, compiler::DiagClass::Order);
}

// A scan whose last rank stops one short, and an exscan that gives rank 1 its
// own contribution: the result conditions name the rank and what is missing
// or extra.
TEST(FamilyPlans, ResultConditionsCatchWrongPrefixes) {
  ir::Plan scan = testplans::chainScan(4, false);
  auto &last = scan.programs[3].ops;
  last.erase(last.begin() + 1); // no recv_reduce: out = x3 only
  scan.programs[2].ops.pop_back(); // nor the send to it
  compiler::VerifyResult r = prove(scan);
  ASSERT_FALSE(r.proven());
  EXPECT_EQ(r.diagnostics.front().cls, compiler::DiagClass::MissingContribution)
      << firstError(r);
  EXPECT_NE(firstError(r).find("rank 3"), std::string::npos) << firstError(r);
}

} // namespace
