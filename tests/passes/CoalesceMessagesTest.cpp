// tests/passes/CoalesceMessagesTest.cpp: coalesce merges messages that are ready together.
#include "PassTestSupport.h"

namespace collc::test {
namespace {

/// True when `pass` leaves the plan `text` as it is.
void expectUnchanged(compiler::Pass &pass, const std::string &text) {
  ir::Plan plan = parse(text);
  ASSERT_TRUE(compiler::verify(plan).proven());
  EXPECT_FALSE(pass.run(plan));
  EXPECT_EQ(ir::printPlan(plan), ir::printPlan(parse(text)));
}

// Three one-chunk messages each way, none waiting for anything, become one
// three-chunk message each way. Rank 0 sends in[0], in[1], in[2] (ascending)
// and rank 1 receives them in the same order; rank 1 sends in[2], in[1],
// in[0] (descending), and rank 0 receives them descending too, so both runs
// join into in[0..2] -> in[0..2] with dst out[0..2].
TEST(CoalesceMessages, MergesARunOfAdjacentMessagesBothWays) {
  auto pass = compiler::createMessageCoalescing();
  EXPECT_EQ(runPass(*pass, R"(format: collc-plan/1
collective: allreduce
algorithm: pieces
ranks: 2
chunks: 3
commutative: false
programs:
  0:
    - {op: send, to: 1, buf: in, chunk: 0}
    - {op: send, to: 1, buf: in, chunk: 1}
    - {op: send, to: 1, buf: in, chunk: 2}
    - {op: recv_reduce, from: 1, buf: in, chunk: 2, dst: out, order: buf_first}
    - {op: recv_reduce, from: 1, buf: in, chunk: 1, dst: out, order: buf_first}
    - {op: recv_reduce, from: 1, buf: in, chunk: 0, dst: out, order: buf_first}
  1:
    - {op: send, to: 0, buf: in, chunk: 2}
    - {op: send, to: 0, buf: in, chunk: 1}
    - {op: send, to: 0, buf: in, chunk: 0}
    - {op: recv_reduce, from: 0, buf: in, chunk: 0, dst: out, order: recv_first}
    - {op: recv_reduce, from: 0, buf: in, chunk: 1, dst: out, order: recv_first}
    - {op: recv_reduce, from: 0, buf: in, chunk: 2, dst: out, order: recv_first}
)"),
            R"(format: collc-plan/1
collective: allreduce
algorithm: pieces
ranks: 2
chunks: 3
scratch: 0
commutative: false
in_place: false
programs:
  0:
    - {op: send, to: 1, buf: in, chunk: 0, count: 3}
    - {op: recv_reduce, from: 1, buf: in, chunk: 0, count: 3, dst: out, order: buf_first}
  1:
    - {op: send, to: 0, buf: in, chunk: 0, count: 3}
    - {op: recv_reduce, from: 0, buf: in, chunk: 0, count: 3, dst: out, order: recv_first}
)");
}

// Rank 1 forwards two chunks, each after receiving it. Once the receives are
// merged both forwards wait for the same op, so a second round merges them.
TEST(CoalesceMessages, MergesInRoundsAsDependenciesBecomeEqual) {
  auto pass = compiler::createMessageCoalescing();
  EXPECT_EQ(runPass(*pass, R"(format: collc-plan/1
collective: bcast
algorithm: forward
ranks: 3
root: 0
chunks: 2
programs:
  0:
    - {op: send, to: 1, buf: out, chunk: 0}
    - {op: send, to: 1, buf: out, chunk: 1}
  1:
    - {op: recv, from: 0, buf: out, chunk: 0}
    - {op: recv, from: 0, buf: out, chunk: 1}
    - {after: [0], op: send, to: 2, buf: out, chunk: 0}
    - {after: [1], op: send, to: 2, buf: out, chunk: 1}
  2:
    - {op: recv, from: 1, buf: out, chunk: 0}
    - {op: recv, from: 1, buf: out, chunk: 1}
)"),
            R"(format: collc-plan/1
collective: bcast
algorithm: forward
ranks: 3
root: 0
chunks: 2
scratch: 0
commutative: true
in_place: false
programs:
  0:
    - {op: send, to: 1, buf: out, chunk: 0, count: 2}
  1:
    - {op: recv, from: 0, buf: out, chunk: 0, count: 2}
    - {after: [0], op: send, to: 2, buf: out, chunk: 0, count: 2}
  2:
    - {op: recv, from: 1, buf: out, chunk: 0, count: 2}
)");
}

// Rank 0 combines the two chunks with different operand orders, so the
// receives cannot merge; its sends back then wait for different ops, so they
// do not either. Coalescing them would make the send of out[0] wait for the
// combine of out[1]: not ready together.
TEST(CoalesceMessages, KeepsMessagesWithDifferentOrdersOrDependencies) {
  auto pass = compiler::createMessageCoalescing();
  expectUnchanged(*pass, R"(format: collc-plan/1
collective: allreduce
algorithm: gather_back
ranks: 2
chunks: 2
commutative: true
programs:
  0:
    - {op: recv_reduce, from: 1, buf: in, chunk: 0, dst: out, order: buf_first}
    - {op: recv_reduce, from: 1, buf: in, chunk: 1, dst: out, order: recv_first}
    - {after: [0], op: send, to: 1, buf: out, chunk: 0}
    - {after: [1], op: send, to: 1, buf: out, chunk: 1}
  1:
    - {op: send, to: 0, buf: in, chunk: 0}
    - {op: send, to: 0, buf: in, chunk: 1}
    - {op: recv, from: 0, buf: out, chunk: 0}
    - {op: recv, from: 0, buf: out, chunk: 1}
)");
}

// The sends read out[0] then out[1], the receives write tmp[1] then tmp[0]:
// one message would put the chunks in the wrong slots.
TEST(CoalesceMessages, KeepsMessagesWhoseReceivesAreNotAdjacentTheSameWay) {
  auto pass = compiler::createMessageCoalescing();
  expectUnchanged(*pass, R"(format: collc-plan/1
collective: bcast
algorithm: swapped
ranks: 2
root: 0
chunks: 2
scratch: 2
programs:
  0:
    - {op: send, to: 1, buf: out, chunk: 0}
    - {op: send, to: 1, buf: out, chunk: 1}
  1:
    - {op: recv, from: 0, buf: tmp, chunk: 1}
    - {op: recv, from: 0, buf: tmp, chunk: 0}
    - {after: [0], op: copy, buf: out, chunk: 0, src: tmp, src_chunk: 1}
    - {after: [1], op: copy, buf: out, chunk: 1, src: tmp, src_chunk: 0}
)");
}

} // namespace
} // namespace collc::test
