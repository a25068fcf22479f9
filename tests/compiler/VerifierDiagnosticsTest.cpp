// tests/compiler/VerifierDiagnosticsTest.cpp: each hand-written broken plan
// in tests/lit/verifier is refused with the right class, rank and op (the
// lit tests there hold the exact text).
#include "compiler/Verifier.h"
#include "ir/PlanBuilder.h"
#include "ir/PlanIO.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

using namespace collc;
using compiler::DiagClass;

namespace {

compiler::VerifyResult verifyFile(const std::string &name,
                                  compiler::VerifyOptions opts = {}) {
  std::string path = std::string(COLLC_SOURCE_DIR) + "/tests/lit/verifier/" + name;
  llvm::Expected<ir::Plan> plan = ir::readPlanFile(path);
  if (!plan) {
    ADD_FAILURE() << llvm::toString(plan.takeError());
    return {};
  }
  return compiler::verify(*plan, opts);
}

struct Expect {
  DiagClass cls;
  std::optional<uint32_t> rank, op;
  bool inPlace = false;
};

void expectDiagnostics(const std::string &file, std::vector<Expect> want,
                       compiler::VerifyOptions opts = {}) {
  compiler::VerifyResult r = verifyFile(file, opts);
  EXPECT_FALSE(r.proven()) << file;
  ASSERT_EQ(r.diagnostics.size(), want.size()) << file;
  for (size_t i = 0; i < want.size(); ++i) {
    const compiler::Diagnostic &d = r.diagnostics[i];
    SCOPED_TRACE(file + ": " + compiler::toString(d));
    EXPECT_EQ(d.cls, want[i].cls);
    EXPECT_EQ(d.rank, want[i].rank);
    EXPECT_EQ(d.op, want[i].op);
    EXPECT_EQ(d.inPlace, want[i].inPlace);
  }
}

TEST(VerifierDiagnostics, ReportsMissingContributions) {
  // At the op that last wrote the slot (the author's line).
  expectDiagnostics("missing-contribution.yaml", {{DiagClass::MissingContribution, 1, 0}});
}
TEST(VerifierDiagnostics, ReportsDuplicateContributions) {
  expectDiagnostics("duplicate-contribution.yaml", {{DiagClass::DuplicateContribution, 0, 1}});
}
TEST(VerifierDiagnostics, ReportsUninitializedReads) {
  expectDiagnostics("uninitialized.yaml", {{DiagClass::Uninitialized, 1, 0}});
}
TEST(VerifierDiagnostics, ReportsMisplacedResults) {
  expectDiagnostics("misplaced.yaml", {{DiagClass::Misplaced, 0, 0}, {DiagClass::Misplaced, 0, 1}});
  // A chunk parked in another chunk's out slot, even if overwritten later: in
  // and out slots are sized for their own chunk, so the runtime would overrun.
  expectDiagnostics("misplaced-temporary.yaml",
                    {{DiagClass::Misplaced, 0, 0}, {DiagClass::Misplaced, 1, 0}});
  expectDiagnostics("misplaced-combine.yaml", {{DiagClass::Misplaced, 0, 1}});
}
TEST(VerifierDiagnostics, ReportsWritesToTheInput) {
  expectDiagnostics("input-write.yaml", {{DiagClass::InputWrite, 0, 0}});
}
TEST(VerifierDiagnostics, ReportsReadsOfInputOverwrittenInPlace) {
  expectDiagnostics("input-write-in-place.yaml", {{DiagClass::InputWrite, 1, 1, true},
                                                  {DiagClass::InputWrite, 1, 2, true}});
}
TEST(VerifierDiagnostics, RejectsAnOrderThatSortedContributionsWouldAccept) {
  expectDiagnostics("order-sorted-contributions.yaml", {{DiagClass::Order, 1, 1}});
}
TEST(VerifierDiagnostics, ReportsTwoAndThreeRankDeadlockCycles) {
  expectDiagnostics("deadlock-two-ranks.yaml", {{DiagClass::Deadlock, 0, 1}});
  expectDiagnostics("deadlock-three-ranks.yaml", {{DiagClass::Deadlock, 0, 1}});
}
TEST(VerifierDiagnostics, RejectsExchangesThatOnlyWorkWithEagerSends) {
  expectDiagnostics("deadlock-eager-only.yaml", {{DiagClass::Deadlock, 0, 1}});
}
TEST(VerifierDiagnostics, ReportsEveryFormOfMismatch) {
  expectDiagnostics("mismatch-unmatched-send.yaml", {{DiagClass::Mismatch, 0, 3}});
  expectDiagnostics("mismatch-unmatched-recv.yaml", {{DiagClass::Mismatch, 1, 2}});
  expectDiagnostics("mismatch-count.yaml", {{DiagClass::Mismatch, 1, 2}});
  expectDiagnostics("mismatch-tmp-too-small.yaml",
                    {{DiagClass::Mismatch, 1, 2}, {DiagClass::Uninitialized, 1, 3}});
  expectDiagnostics("mismatch-peers.yaml", {{DiagClass::Mismatch, 0, 1},
                                            {DiagClass::Mismatch, 1, 2},
                                            {DiagClass::Mismatch, 1, 3}});
}
TEST(VerifierDiagnostics, ReportsARaceBetweenASendAndAReceive) {
  expectDiagnostics("race-send-recv.yaml", {{DiagClass::Race, 0, 2}});
}
TEST(VerifierDiagnostics, ProvesPlansWhoseRanksFoldDifferentlyButRefusesThemWhenRequired) {
  compiler::VerifyResult r = verifyFile("nondeterministic.yaml");
  EXPECT_TRUE(r.proven());
  EXPECT_FALSE(r.stats.identical);
  compiler::VerifyOptions o;
  o.requireIdentical = true;
  r = verifyFile("nondeterministic.yaml", o);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].cls, DiagClass::Nondeterministic);
  EXPECT_EQ(r.diagnostics[0].chunk, 0u);
  EXPECT_NE(r.diagnostics[0].message.find("rank 0 and rank 2"), std::string::npos);
}

// A plan with one duplicate contribution per rank: p independent errors.
ir::Plan everyRankTwice(uint32_t p) {
  ir::Shape s;
  s.ranks = p;
  ir::PlanBuilder b(s, "twice");
  for (uint32_t r = 0; r < p; ++r) {
    b.copy(r, ir::out(0), ir::in(0));
    b.nextStep();
    b.reduce(r, ir::out(0), ir::in(0), ir::Order::OtherFirst);
  }
  return b.take();
}

TEST(VerifierDiagnostics, ReportsEveryIndependentErrorUpToTheCap) {
  compiler::VerifyOptions o;
  o.maxErrors = 0;
  compiler::VerifyResult all = compiler::verify(everyRankTwice(30), o);
  EXPECT_EQ(all.diagnostics.size(), 30u);
  EXPECT_EQ(all.dropped, 0u);
  o.maxErrors = 20;
  compiler::VerifyResult capped = compiler::verify(everyRankTwice(30), o);
  EXPECT_EQ(capped.diagnostics.size(), 20u);
  EXPECT_EQ(capped.dropped, 10u);
  EXPECT_FALSE(capped.proven());
}

TEST(VerifierDiagnostics, ReportsMalformedBuilderPlansAsInvalid) {
  ir::Shape s;
  s.ranks = 2;
  ir::PlanBuilder b(s, "bad");
  b.send(0, 1, ir::out(3));
  compiler::VerifyResult r = compiler::verify(b.take());
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].cls, DiagClass::Invalid);
  EXPECT_EQ(r.diagnostics[0].rank, 0u);
  EXPECT_EQ(r.diagnostics[0].op, 0u);
  ir::Plan wrong;
  wrong.shape.ranks = 3;
  wrong.programs.resize(2);
  r = compiler::verify(wrong);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(compiler::toString(r.diagnostics[0]), "plan: invalid: 2 programs for 3 ranks");
}

TEST(VerifierDiagnostics, CountsStatsOfAProvenPlan) {
  llvm::Expected<ir::Plan> plan = ir::readPlanFile(std::string(COLLC_SOURCE_DIR) +
                                                   "/tests/lit/verifier/nondeterministic.yaml");
  ASSERT_TRUE(bool(plan));
  compiler::VerifyResult r = compiler::verify(*plan);
  EXPECT_EQ(r.stats.ops, 21u);
  EXPECT_EQ(r.stats.messages, 6u);
  EXPECT_EQ(r.stats.chunksMoved, 6u);
  EXPECT_EQ(r.stats.scratch, 2u);
  // copy/messages (1), then two dependent reduces.
  EXPECT_EQ(r.stats.criticalPath, 3u);
}

// stopAtFirstError (proveStrongest's tried claims): a refused plan stays
// refused, a proven one gives the full result.
TEST(VerifierDiagnostics, StoppingAtTheFirstErrorKeepsTheVerdict) {
  std::error_code ec;
  const std::string dir = std::string(COLLC_SOURCE_DIR) + "/tests/lit/verifier";
  size_t files = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    if (!llvm::StringRef(it->path()).endswith(".yaml"))
      continue;
    llvm::Expected<ir::Plan> plan = ir::readPlanFile(it->path());
    if (!plan) {
      llvm::consumeError(plan.takeError());
      continue;
    }
    ++files;
    for (bool noncommutative : {false, true}) {
      SCOPED_TRACE(it->path() + (noncommutative ? " (noncommutative)" : ""));
      compiler::VerifyOptions opts;
      opts.noncommutative = noncommutative;
      const compiler::VerifyResult full = compiler::verify(*plan, opts);
      opts.stopAtFirstError = true;
      const compiler::VerifyResult quick = compiler::verify(*plan, opts);
      EXPECT_EQ(quick.proven(), full.proven());
      if (full.proven()) {
        EXPECT_EQ(quick.stats.ops, full.stats.ops);
        EXPECT_EQ(quick.stats.messages, full.stats.messages);
        EXPECT_EQ(quick.stats.criticalPath, full.stats.criticalPath);
        EXPECT_EQ(quick.stats.identical, full.stats.identical);
      } else {
        EXPECT_FALSE(quick.diagnostics.empty());
      }
    }
  }
  EXPECT_GT(files, 20u);
}

} // namespace
