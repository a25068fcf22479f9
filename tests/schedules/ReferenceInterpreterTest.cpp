// tests/schedules/ReferenceInterpreterTest.cpp: the reference interpreter can fail, for the right reason.
//
// Hand-written plans, each broken in one way, must be rejected with the
// matching error class; their repaired twins must be accepted. Without these
// the generator sweep would prove nothing.
#include "tests/support/ReferenceInterpreter.h"

#include "ir/PlanIO.h"

#include "llvm/Support/Error.h"

#include <gtest/gtest.h>

namespace collc::test {
namespace {

ir::Plan parse(const char *text) {
  llvm::Expected<ir::Plan> plan = ir::parsePlan(text, "test.yaml");
  if (!plan) {
    ADD_FAILURE() << llvm::toString(plan.takeError());
    return ir::Plan{};
  }
  return std::move(*plan);
}

/// `text` with the first occurrence of `from` replaced by `to`.
std::string replaced(std::string text, const std::string &from, const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return text;
}

RefOptions multiset() {
  RefOptions o;
  o.compareAsMultiset = true;
  return o;
}

#define EXPECT_REJECTED(outcome, errorKind, text)                                         \
  do {                                                                                     \
    const RefOutcome &o_ = (outcome);                                                      \
    EXPECT_FALSE(o_.ok);                                                                   \
    EXPECT_EQ(o_.kind, errorKind) << o_.error;                                             \
    EXPECT_NE(o_.error.find(text), std::string::npos) << o_.error;                         \
  } while (0)

// Two ranks exchange their vectors and combine them in rank order.
const char *const exchangeTwo = R"(format: collc-plan/1
collective: allreduce
ranks: 2
chunks: 1
scratch: 1
commutative: false
in_place: true
programs:
  0:
    - {step: 0, op: copy, buf: out, chunk: 0, src: in}
    - {step: 1, op: send, to: 1, buf: out, chunk: 0}
    - {step: 1, op: recv, from: 1, buf: tmp, chunk: 0}
    - {step: 2, op: reduce, buf: out, chunk: 0, src: tmp, order: buf_first}
  1:
    - {step: 0, op: copy, buf: out, chunk: 0, src: in}
    - {step: 1, op: send, to: 0, buf: out, chunk: 0}
    - {step: 1, op: recv, from: 0, buf: tmp, chunk: 0}
    - {step: 2, op: reduce, buf: out, chunk: 0, src: tmp, order: src_first}
)";

TEST(ReferenceInterpreter, AcceptsACorrectExchangeInEveryMode) {
  ir::Plan plan = parse(exchangeTwo);
  for (bool alias : {false, true})
    for (bool asMultiset : {false, true})
      for (ReadyOrder order : {ReadyOrder::Fifo, ReadyOrder::Lifo}) {
        RefOptions o;
        o.aliasInOut = alias;
        o.compareAsMultiset = asMultiset;
        o.readyOrder = order;
        o.requireIdenticalTrees = true;
        RefOutcome out = runReference(plan, o);
        EXPECT_TRUE(out.ok) << out.error;
        EXPECT_EQ(out.opsCompleted, 8u);
      }
}

TEST(ReferenceInterpreter, RejectsOperandsInTheWrongOrderUnlessComparingMultisets) {
  // Rank 0 computes x1 ∘ x0.
  ir::Plan plan = parse(replaced(exchangeTwo, "order: buf_first", "order: src_first").c_str());
  EXPECT_REJECTED(runReference(plan), RefErrorKind::Order, "rank 0, out[0]: holds x[1,0]");
  EXPECT_TRUE(runReference(plan, multiset()).ok);
}

TEST(ReferenceInterpreter, RejectsAMissingContribution) {
  // Rank 2 never sends: the root's result lacks x2.
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: reduce
ranks: 3
root: 0
chunks: 1
scratch: 1
commutative: false
programs:
  0:
    - {step: 0, op: copy, buf: out, chunk: 0, src: in}
    - {step: 1, op: recv_reduce, from: 1, buf: out, chunk: 0, order: buf_first}
  1:
    - {step: 0, op: copy, buf: tmp, chunk: 0, src: in}
    - {step: 1, op: send, to: 0, buf: tmp, chunk: 0}
  2: []
)");
  EXPECT_REJECTED(runReference(plan), RefErrorKind::MissingContribution,
                  "rank 2 is missing");
  EXPECT_REJECTED(runReference(plan, multiset()), RefErrorKind::MissingContribution,
                  "rank 2 is missing");
}

TEST(ReferenceInterpreter, RejectsADuplicateContribution) {
  // Rank 1 sends its value twice and rank 0 combines both copies.
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: reduce
ranks: 2
root: 0
chunks: 1
scratch: 1
commutative: true
programs:
  0:
    - {step: 0, op: copy, buf: out, chunk: 0, src: in}
    - {step: 1, op: recv_reduce, from: 1, buf: out, chunk: 0, order: buf_first}
    - {step: 2, op: recv_reduce, from: 1, buf: out, chunk: 0, order: buf_first}
  1:
    - {step: 0, op: copy, buf: tmp, chunk: 0, src: in}
    - {step: 1, op: send, to: 0, buf: tmp, chunk: 0}
    - {step: 2, op: send, to: 0, buf: tmp, chunk: 0}
)");
  EXPECT_REJECTED(runReference(plan, multiset()), RefErrorKind::DuplicateContribution,
                  "rank 1 contributes twice");
}

TEST(ReferenceInterpreter, RejectsAResultInTheWrongSlot) {
  // Each rank leaves its chunk 1 in out[0].
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: allgather
ranks: 2
chunks: 2
programs:
  0:
    - {step: 0, op: copy, buf: out, chunk: 1, src: in, src_chunk: 0}
    - {step: 1, op: send, to: 1, buf: out, chunk: 1}
    - {step: 1, op: recv, from: 1, buf: out, chunk: 0}
  1:
    - {step: 0, op: copy, buf: out, chunk: 0, src: in}
    - {step: 1, op: send, to: 0, buf: out, chunk: 0}
    - {step: 1, op: recv, from: 0, buf: out, chunk: 1}
)");
  EXPECT_REJECTED(runReference(plan), RefErrorKind::Misplaced, "rank 0, out[0]");
}

TEST(ReferenceInterpreter, RejectsTwoRanksThatBothReceiveFirstAsDeadlock) {
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: allreduce
ranks: 2
chunks: 1
commutative: true
programs:
  0:
    - {step: 0, op: copy, buf: out, chunk: 0, src: in}
    - {step: 1, op: recv_reduce, from: 1, buf: out, chunk: 0, order: buf_first}
    - {step: 2, op: send, to: 1, buf: out, chunk: 0}
  1:
    - {step: 0, op: copy, buf: out, chunk: 0, src: in}
    - {step: 1, op: recv_reduce, from: 0, buf: out, chunk: 0, order: recv_first}
    - {step: 2, op: send, to: 0, buf: out, chunk: 0}
)");
  EXPECT_REJECTED(runReference(plan, multiset()), RefErrorKind::Deadlock,
                  "rank 0, op 1 (recv_reduce out[0] from 1) is posted but waits for rank 1, "
                  "op 2 (send out[0] to 0)");
}

TEST(ReferenceInterpreter, TreatsSendsAsUnbufferedSoARingOfSendsFirstDeadlocks) {
  // Correct with eager buffering, stuck without it: every rank sends before
  // it receives, around a ring of three.
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: bcast
ranks: 3
root: 0
chunks: 1
programs:
  0:
    - {step: 0, op: send, to: 1, buf: out, chunk: 0}
    - {step: 1, op: recv, from: 2, buf: out, chunk: 0}
  1:
    - {step: 0, op: send, to: 2, buf: out, chunk: 0}
    - {step: 1, op: recv, from: 0, buf: out, chunk: 0}
  2:
    - {step: 0, op: send, to: 0, buf: out, chunk: 0}
    - {step: 1, op: recv, from: 1, buf: out, chunk: 0}
)");
  EXPECT_REJECTED(runReference(plan), RefErrorKind::Deadlock, "6 of 6 ops never complete");
}

TEST(ReferenceInterpreter, RejectsAnUnmatchedSend) {
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: bcast
ranks: 2
root: 0
chunks: 1
programs:
  0:
    - {step: 0, op: send, to: 1, buf: out, chunk: 0}
    - {step: 1, op: send, to: 1, buf: out, chunk: 0}
  1:
    - {step: 0, op: recv, from: 0, buf: out, chunk: 0}
)");
  EXPECT_REJECTED(runReference(plan), RefErrorKind::Mismatch,
                  "rank 0, op 1 (send out[0] to 1): unmatched send");
}

TEST(ReferenceInterpreter, RejectsAnUnmatchedReceive) {
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: bcast
ranks: 2
root: 0
chunks: 1
programs:
  0: []
  1:
    - {step: 0, op: recv, from: 0, buf: out, chunk: 0}
)");
  EXPECT_REJECTED(runReference(plan), RefErrorKind::Mismatch, "unmatched receive");
}

TEST(ReferenceInterpreter, RejectsMatchedEndsWithDifferentCounts) {
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: bcast
ranks: 2
root: 0
chunks: 2
programs:
  0:
    - {step: 0, op: send, to: 1, buf: out, chunk: 0, count: 2}
  1:
    - {step: 0, op: recv, from: 0, buf: out, chunk: 0}
)");
  EXPECT_REJECTED(runReference(plan), RefErrorKind::Mismatch, "count mismatch");
}

TEST(ReferenceInterpreter, RejectsPeersOutOfRangeOrSelf) {
  ir::Plan self = parse(R"(format: collc-plan/1
collective: bcast
ranks: 2
root: 0
chunks: 1
programs:
  0:
    - {op: send, to: 0, buf: out, chunk: 0}
  1: []
)");
  EXPECT_REJECTED(runReference(self), RefErrorKind::Mismatch, "names itself");
  ir::Plan far = parse(R"(format: collc-plan/1
collective: bcast
ranks: 2
root: 0
chunks: 1
programs:
  0:
    - {op: send, to: 5, buf: out, chunk: 0}
  1: []
)");
  EXPECT_REJECTED(runReference(far), RefErrorKind::Mismatch, "peer 5 out of range");
}

TEST(ReferenceInterpreter, RejectsReadingAnUndefinedSlot) {
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: allreduce
ranks: 2
chunks: 1
scratch: 1
programs:
  0:
    - {step: 0, op: copy, buf: out, chunk: 0, src: in}
    - {step: 1, op: send, to: 1, buf: tmp, chunk: 0}
  1:
    - {step: 0, op: copy, buf: out, chunk: 0, src: in}
    - {step: 1, op: recv_reduce, from: 0, buf: out, chunk: 0, order: recv_first}
)");
  EXPECT_REJECTED(runReference(plan), RefErrorKind::Uninitialized,
                  "rank 0, op 1 (send tmp[0] to 1): sends tmp[0], which is undefined");
}

TEST(ReferenceInterpreter, RejectsWritingTheInBuffer) {
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: allreduce
ranks: 2
chunks: 1
programs:
  0:
    - {step: 0, op: send, to: 1, buf: in, chunk: 0}
  1:
    - {step: 0, op: recv_reduce, from: 0, buf: in, chunk: 0, order: recv_first}
)");
  EXPECT_REJECTED(runReference(plan), RefErrorKind::InputWrite, "rank 1, op 0");
}

TEST(ReferenceInterpreter, RejectsConcurrentOpsOnTheSameSlot) {
  // Rank 1 receives into out[0] while its send still reads it.
  ir::Plan plan = parse(replaced(exchangeTwo, "op: recv, from: 0, buf: tmp",
                                 "op: recv, from: 0, buf: out")
                            .c_str());
  EXPECT_REJECTED(runReference(plan), RefErrorKind::Race,
                  "rank 1, op 2 (recv out[0] from 0): touches slots that rank 1, op 1 "
                  "(send out[0] to 0) also uses");
  RefOptions noRaces;
  noRaces.checkRaces = false;
  EXPECT_FALSE(runReference(plan, noRaces).ok); // and the result is wrong, too
}

TEST(ReferenceInterpreter, FollowsAfterDependenciesAndFindsRacesBetweenUnorderedOps) {
  // Op 2 waits for op 0 only, so it runs concurrently with op 1 (both use out[0]).
  const char *racy = R"(format: collc-plan/1
collective: allreduce
ranks: 1
chunks: 1
scratch: 1
programs:
  0:
    - {op: copy, buf: tmp, chunk: 0, src: in}
    - {after: [0], op: copy, buf: out, chunk: 0, src: tmp}
    - {after: [0], op: copy, buf: out, chunk: 0, src: tmp}
)";
  EXPECT_REJECTED(runReference(parse(racy)), RefErrorKind::Race, "rank 0, op 2");
  const char *chained = R"(format: collc-plan/1
collective: allreduce
ranks: 1
chunks: 1
scratch: 1
programs:
  0:
    - {op: copy, buf: tmp, chunk: 0, src: in}
    - {after: [0], op: copy, buf: out, chunk: 0, src: tmp}
    - {after: [1], op: copy, buf: out, chunk: 0, src: tmp}
)";
  RefOutcome out = runReference(parse(chained));
  EXPECT_TRUE(out.ok) << out.error;
}

TEST(ReferenceInterpreter, RejectsReadingInAfterWritingOutWhenTheyAreAliased) {
  // Correct with separate buffers; with MPI_IN_PLACE the copy into out
  // overwrites the input that the reduce reads afterwards.
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: allreduce
ranks: 2
chunks: 1
scratch: 1
commutative: false
programs:
  0:
    - {step: 0, op: send, to: 1, buf: in, chunk: 0}
    - {step: 0, op: recv, from: 1, buf: tmp, chunk: 0}
    - {step: 1, op: copy, buf: out, chunk: 0, src: tmp}
    - {step: 2, op: reduce, buf: out, chunk: 0, src: in, order: src_first}
  1:
    - {step: 0, op: send, to: 0, buf: in, chunk: 0}
    - {step: 0, op: recv, from: 0, buf: tmp, chunk: 0}
    - {step: 1, op: copy, buf: out, chunk: 0, src: tmp}
    - {step: 2, op: reduce, buf: out, chunk: 0, src: in, order: buf_first}
)");
  RefOutcome separate = runReference(plan);
  EXPECT_TRUE(separate.ok) << separate.error;
  RefOptions aliased;
  aliased.aliasInOut = true;
  EXPECT_REJECTED(runReference(plan, aliased), RefErrorKind::DuplicateContribution,
                  "contributes twice");
}

TEST(ReferenceInterpreter, AliasesAllgatherInputWithTheRanksOwnOutputBlock) {
  // With in[0] of rank r aliased to out[r], rank 1's send of in[0] and its
  // receive into out[0] touch different memory; a wrong mapping would race.
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: allgather
ranks: 2
chunks: 2
in_place: true
programs:
  0:
    - {step: 0, op: copy, buf: out, chunk: 0, src: in}
    - {step: 1, op: send, to: 1, buf: out, chunk: 0}
    - {step: 1, op: recv, from: 1, buf: out, chunk: 1}
  1:
    - {step: 0, op: send, to: 0, buf: in, chunk: 0}
    - {step: 0, op: recv, from: 0, buf: out, chunk: 0}
    - {step: 1, op: copy, buf: out, chunk: 1, src: in, src_chunk: 0}
)");
  // Rank 0 sends in step 1 but rank 1 receives in step 0: fine, no barrier.
  for (bool alias : {false, true}) {
    RefOptions o;
    o.aliasInOut = alias;
    RefOutcome out = runReference(plan, o);
    EXPECT_TRUE(out.ok) << out.error;
  }
}

TEST(ReferenceInterpreter, RejectsRanksThatBuildDifferentReductionTrees) {
  // Every rank gets every input; rank 2 parenthesizes x0 ∘ (x1 ∘ x2), the
  // others (x0 ∘ x1) ∘ x2. Right as sequences, not bitwise reproducible.
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: allreduce
ranks: 3
chunks: 1
scratch: 2
commutative: false
programs:
  0:
    - {step: 0, op: copy, buf: out, chunk: 0, src: in}
    - {step: 1, op: send, to: 1, buf: out, chunk: 0}
    - {step: 1, op: send, to: 2, buf: out, chunk: 0}
    - {step: 1, op: recv, from: 1, buf: tmp, chunk: 0}
    - {step: 1, op: recv, from: 2, buf: tmp, chunk: 1}
    - {step: 2, op: reduce, buf: out, chunk: 0, src: tmp, src_chunk: 0, order: buf_first}
    - {step: 3, op: reduce, buf: out, chunk: 0, src: tmp, src_chunk: 1, order: buf_first}
  1:
    - {step: 0, op: copy, buf: out, chunk: 0, src: in}
    - {step: 1, op: send, to: 0, buf: out, chunk: 0}
    - {step: 1, op: send, to: 2, buf: out, chunk: 0}
    - {step: 1, op: recv, from: 0, buf: tmp, chunk: 0}
    - {step: 1, op: recv, from: 2, buf: tmp, chunk: 1}
    - {step: 2, op: reduce, buf: out, chunk: 0, src: tmp, src_chunk: 0, order: src_first}
    - {step: 3, op: reduce, buf: out, chunk: 0, src: tmp, src_chunk: 1, order: buf_first}
  2:
    - {step: 0, op: copy, buf: out, chunk: 0, src: in}
    - {step: 1, op: send, to: 0, buf: out, chunk: 0}
    - {step: 1, op: send, to: 1, buf: out, chunk: 0}
    - {step: 1, op: recv, from: 0, buf: tmp, chunk: 0}
    - {step: 1, op: recv, from: 1, buf: tmp, chunk: 1}
    - {step: 2, op: reduce, buf: out, chunk: 0, src: tmp, src_chunk: 1, order: src_first}
    - {step: 3, op: reduce, buf: out, chunk: 0, src: tmp, src_chunk: 0, order: src_first}
)");
  RefOutcome plain = runReference(plan);
  EXPECT_TRUE(plain.ok) << plain.error;
  RefOptions o;
  o.requireIdenticalTrees = true;
  EXPECT_REJECTED(runReference(plan, o), RefErrorKind::Nondeterministic, "rank 2, out[0]");
}

TEST(ReferenceInterpreter, ChecksScanExscanReduceScatterAndBcastResults) {
  const char *scan = R"(format: collc-plan/1
collective: scan
ranks: 2
chunks: 1
commutative: false
programs:
  0:
    - {step: 0, op: copy, buf: out, chunk: 0, src: in}
    - {step: 1, op: send, to: 1, buf: out, chunk: 0}
  1:
    - {step: 0, op: copy, buf: out, chunk: 0, src: in}
    - {step: 1, op: recv_reduce, from: 0, buf: out, chunk: 0, order: recv_first}
)";
  RefOutcome out = runReference(parse(scan));
  EXPECT_TRUE(out.ok) << out.error;
  // The same plan is not an allreduce: rank 0 lacks x1.
  EXPECT_REJECTED(runReference(parse(replaced(scan, "collective: scan", "collective: allreduce").c_str())), RefErrorKind::MissingContribution,
                  "rank 0, out[0]: holds x[0] of chunk 0: rank 1 is missing");

  const char *exscan = R"(format: collc-plan/1
collective: exscan
ranks: 2
chunks: 1
programs:
  0:
    - {step: 0, op: send, to: 1, buf: in, chunk: 0}
  1:
    - {step: 0, op: recv, from: 0, buf: out, chunk: 0}
)";
  out = runReference(parse(exscan));
  EXPECT_TRUE(out.ok) << out.error;
  // As a scan, rank 1 would also need its own input.
  EXPECT_REJECTED(runReference(parse(replaced(exscan, "collective: exscan", "collective: scan").c_str())), RefErrorKind::MissingContribution,
                  "rank 0, out[0]: is undefined");

  const char *reduceScatter = R"(format: collc-plan/1
collective: reduce_scatter_block
ranks: 2
chunks: 2
scratch: 1
commutative: false
programs:
  0:
    - {step: 0, op: send, to: 1, buf: in, chunk: 1}
    - {step: 0, op: recv, from: 1, buf: tmp, chunk: 0}
    - {step: 0, op: copy, buf: out, chunk: 0, src: in}
    - {step: 1, op: reduce, buf: out, chunk: 0, src: tmp, order: buf_first}
  1:
    - {step: 0, op: send, to: 0, buf: in, chunk: 0}
    - {step: 0, op: recv, from: 0, buf: tmp, chunk: 0}
    - {step: 0, op: copy, buf: out, chunk: 0, src: in, src_chunk: 1}
    - {step: 1, op: reduce, buf: out, chunk: 0, src: tmp, order: src_first}
)";
  out = runReference(parse(reduceScatter));
  EXPECT_TRUE(out.ok) << out.error;

  const char *bcast = R"(format: collc-plan/1
collective: bcast
ranks: 3
root: 1
chunks: 2
programs:
  0:
    - {step: 0, op: recv, from: 1, buf: out, chunk: 0, count: 2}
  1:
    - {step: 0, op: send, to: 0, buf: out, chunk: 0, count: 2}
    - {step: 0, op: send, to: 2, buf: out, chunk: 0, count: 2}
  2:
    - {step: 0, op: recv, from: 1, buf: out, chunk: 0, count: 2}
)";
  out = runReference(parse(bcast));
  EXPECT_TRUE(out.ok) << out.error;
  EXPECT_REJECTED(runReference(parse(replaced(bcast, "root: 1", "root: 0").c_str())),
                  RefErrorKind::Uninitialized, "rank 1, op 0 (send out[0..1] to 0)");
}

TEST(ReferenceInterpreter, RejectsAliasingForReduceScatterBlock) {
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: reduce_scatter_block
ranks: 1
chunks: 1
programs:
  0:
    - {op: copy, buf: out, chunk: 0, src: in}
)");
  EXPECT_TRUE(runReference(plan).ok);
  RefOptions o;
  o.aliasInOut = true;
  EXPECT_REJECTED(runReference(plan, o), RefErrorKind::Invalid, "reduce_scatter_block");
}

} // namespace
} // namespace collc::test
