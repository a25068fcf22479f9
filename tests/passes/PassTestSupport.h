// tests/passes/PassTestSupport.h: helpers shared by the pass tests.
#ifndef COLLC_TESTS_PASSES_PASSTESTSUPPORT_H
#define COLLC_TESTS_PASSES_PASSTESTSUPPORT_H

#include "compiler/Verifier.h"
#include "compiler/passes/Pass.h"
#include "ir/PlanIO.h"

#include <gtest/gtest.h>

#include <string>

namespace collc::test {

/// A 2-rank, 2-chunk allreduce in barrier steps, as a generator writes it:
/// each rank copies its input, sends one chunk, combines the other, then the
/// two exchange their results. Several pass tests start from it.
inline const char *const pairPlan = R"(format: collc-plan/1
collective: allreduce
algorithm: pair
ranks: 2
chunks: 2
commutative: true
programs:
  0:
    - {step: 0, op: copy, buf: out, chunk: 0, count: 2, src: in}
    - {step: 1, op: send, to: 1, buf: out, chunk: 1}
    - {step: 1, op: recv_reduce, from: 1, buf: out, chunk: 0, order: recv_first}
    - {step: 2, op: send, to: 1, buf: out, chunk: 0}
    - {step: 2, op: recv, from: 1, buf: out, chunk: 1}
  1:
    - {step: 0, op: copy, buf: out, chunk: 0, count: 2, src: in}
    - {step: 1, op: send, to: 0, buf: out, chunk: 0}
    - {step: 1, op: recv_reduce, from: 0, buf: out, chunk: 1, order: recv_first}
    - {step: 2, op: send, to: 0, buf: out, chunk: 1}
    - {step: 2, op: recv, from: 0, buf: out, chunk: 0}
)";

/// Parses plan text; a parse error fails the test.
inline ir::Plan parse(const std::string &text) {
  llvm::Expected<ir::Plan> plan = ir::parsePlan(text, "test.yaml");
  if (!plan) {
    ADD_FAILURE() << llvm::toString(plan.takeError());
    return ir::Plan{};
  }
  return std::move(*plan);
}

/// The first few diagnostics of a verification, for failure messages.
inline std::string firstErrors(const compiler::VerifyResult &r, size_t n = 3) {
  std::string s;
  for (size_t i = 0; i < r.diagnostics.size() && i < n; ++i)
    s += compiler::toString(r.diagnostics[i]) + "\n";
  return s;
}

/// Runs `pass` on the plan `input` and returns the canonical text of the
/// result; also checks that the result verifies and that a second run
/// changes nothing... unless `idempotent` is false.
inline std::string runPass(compiler::Pass &pass, const std::string &input, bool *changed = nullptr,
                           bool idempotent = true) {
  ir::Plan plan = parse(input);
  bool c = pass.run(plan);
  if (changed)
    *changed = c;
  compiler::VerifyResult r = compiler::verify(plan);
  EXPECT_TRUE(r.proven()) << pass.name().str() << " result does not verify:\n"
                          << firstErrors(r) << ir::printPlan(plan);
  if (idempotent) {
    ir::Plan again = plan;
    pass.run(again);
    EXPECT_EQ(ir::printPlan(again), ir::printPlan(plan)) << pass.name().str() << " is not idempotent";
  }
  return ir::printPlan(plan);
}

} // namespace collc::test

#endif // COLLC_TESTS_PASSES_PASSTESTSUPPORT_H
