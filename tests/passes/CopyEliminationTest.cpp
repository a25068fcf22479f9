// tests/passes/CopyEliminationTest.cpp: copy-elim folds copies and scratch receives away.
#include "PassTestSupport.h"

namespace collc::test {
namespace {

// The initial `copy out <- in` goes: sends of a copied slot send in, the
// first combine of a copied slot becomes three-address (buf: in, dst: out).
// Waits on the copy are dropped (it waited for nothing); the barrier steps
// after it become explicit lists, which relax-deps shortens.
TEST(CopyElimination, ForwardsTheInitialCopyIntoThreeAddressCombines) {
  auto pass = compiler::createCopyElimination();
  EXPECT_EQ(runPass(*pass, pairPlan),
            R"(format: collc-plan/1
collective: allreduce
algorithm: pair
ranks: 2
chunks: 2
scratch: 0
commutative: true
in_place: false
programs:
  0:
    - {op: send, to: 1, buf: in, chunk: 1}
    - {op: recv_reduce, from: 1, buf: in, chunk: 0, dst: out, order: recv_first}
    - {after: [0, 1], op: send, to: 1, buf: out, chunk: 0}
    - {after: [0, 1], op: recv, from: 1, buf: out, chunk: 1}
  1:
    - {op: send, to: 0, buf: in, chunk: 0}
    - {op: recv_reduce, from: 0, buf: in, chunk: 1, dst: out, order: recv_first}
    - {after: [0, 1], op: send, to: 0, buf: out, chunk: 1}
    - {after: [0, 1], op: recv, from: 0, buf: out, chunk: 0}
)");
}

// Rank r copies in[0] to tmp[0], then sends tmp[0] and copies it on to its
// own out slot, concurrently. With in and out separate both read in[0]
// directly (forwarding). With them aliased (in_place) in[0] *is* that out
// slot, which the second copy rewrites while the send would read it, so
// forwarding is refused; instead the first copy writes out directly and the
// send reads out. Both results are proven (runPass checks), in_place kept.
TEST(CopyElimination, RefusesForwardingThatRacesWhenInAndOutAlias) {
  auto pass = compiler::createCopyElimination();
  const std::string inPlace = R"(format: collc-plan/1
collective: allgather
algorithm: via_tmp
ranks: 2
chunks: 2
scratch: 1
in_place: true
programs:
  0:
    - {op: copy, buf: tmp, chunk: 0, src: in}
    - {after: [0], op: copy, buf: out, chunk: 0, src: tmp}
    - {after: [0], op: send, to: 1, buf: tmp, chunk: 0}
    - {op: recv, from: 1, buf: out, chunk: 1}
  1:
    - {op: copy, buf: tmp, chunk: 0, src: in}
    - {after: [0], op: copy, buf: out, chunk: 1, src: tmp, src_chunk: 0}
    - {after: [0], op: send, to: 0, buf: tmp, chunk: 0}
    - {op: recv, from: 0, buf: out, chunk: 0}
)";
  const std::string separate = R"(format: collc-plan/1
collective: allgather
algorithm: via_tmp
ranks: 2
chunks: 2
scratch: 1
in_place: false
programs:
  0:
    - {op: copy, buf: tmp, chunk: 0, src: in}
    - {after: [0], op: copy, buf: out, chunk: 0, src: tmp}
    - {after: [0], op: send, to: 1, buf: tmp, chunk: 0}
    - {op: recv, from: 1, buf: out, chunk: 1}
  1:
    - {op: copy, buf: tmp, chunk: 0, src: in}
    - {after: [0], op: copy, buf: out, chunk: 1, src: tmp, src_chunk: 0}
    - {after: [0], op: send, to: 0, buf: tmp, chunk: 0}
    - {op: recv, from: 0, buf: out, chunk: 0}
)";
  EXPECT_EQ(runPass(*pass, inPlace), R"(format: collc-plan/1
collective: allgather
algorithm: via_tmp
ranks: 2
chunks: 2
scratch: 1
commutative: true
in_place: true
programs:
  0:
    - {op: copy, buf: out, chunk: 0, src: in}
    - {after: [0], op: send, to: 1, buf: out, chunk: 0}
    - {op: recv, from: 1, buf: out, chunk: 1}
  1:
    - {op: copy, buf: out, chunk: 1, src: in, src_chunk: 0}
    - {after: [0], op: send, to: 0, buf: out, chunk: 1}
    - {op: recv, from: 0, buf: out, chunk: 0}
)");
  EXPECT_EQ(runPass(*pass, separate), R"(format: collc-plan/1
collective: allgather
algorithm: via_tmp
ranks: 2
chunks: 2
scratch: 1
commutative: true
in_place: false
programs:
  0:
    - {op: copy, buf: out, chunk: 0, src: in}
    - {op: send, to: 1, buf: in, chunk: 0}
    - {op: recv, from: 1, buf: out, chunk: 1}
  1:
    - {op: copy, buf: out, chunk: 1, src: in, src_chunk: 0}
    - {op: send, to: 0, buf: in, chunk: 0}
    - {op: recv, from: 0, buf: out, chunk: 0}
)");
}

// `recv tmp; copy out <- tmp`: the receive lands in out, and the forwarding
// send on rank 1 reads out too.
TEST(CopyElimination, ReceivesStraightIntoTheCopysDestination) {
  auto pass = compiler::createCopyElimination();
  EXPECT_EQ(runPass(*pass, R"(format: collc-plan/1
collective: bcast
algorithm: via_tmp
ranks: 3
root: 0
chunks: 1
scratch: 1
programs:
  0:
    - {op: send, to: 1, buf: out, chunk: 0}
  1:
    - {op: recv, from: 0, buf: tmp, chunk: 0}
    - {after: [0], op: send, to: 2, buf: tmp, chunk: 0}
    - {after: [0], op: copy, buf: out, chunk: 0, src: tmp}
  2:
    - {op: recv, from: 1, buf: tmp, chunk: 0}
    - {after: [0], op: copy, buf: out, chunk: 0, src: tmp}
)"),
            R"(format: collc-plan/1
collective: bcast
algorithm: via_tmp
ranks: 3
root: 0
chunks: 1
scratch: 1
commutative: true
in_place: false
programs:
  0:
    - {op: send, to: 1, buf: out, chunk: 0}
  1:
    - {op: recv, from: 0, buf: out, chunk: 0}
    - {after: [0], op: send, to: 2, buf: out, chunk: 0}
  2:
    - {op: recv, from: 1, buf: out, chunk: 0}
)");
}

// `recv tmp; reduce in -> out with tmp` becomes one recv_reduce with the
// same order and dst, in the receive's place: the combine happens on arrival.
TEST(CopyElimination, CombinesAReceiveIntoScratchOnArrival) {
  auto pass = compiler::createCopyElimination();
  EXPECT_EQ(runPass(*pass, R"(format: collc-plan/1
collective: allreduce
algorithm: exchange
ranks: 2
chunks: 1
scratch: 1
commutative: false
programs:
  0:
    - {op: send, to: 1, buf: in, chunk: 0}
    - {op: recv, from: 1, buf: tmp, chunk: 0}
    - {after: [1], op: reduce, buf: in, chunk: 0, src: tmp, dst: out, order: buf_first}
  1:
    - {op: send, to: 0, buf: in, chunk: 0}
    - {op: recv, from: 0, buf: tmp, chunk: 0}
    - {after: [1], op: reduce, buf: in, chunk: 0, src: tmp, dst: out, order: src_first}
)"),
            R"(format: collc-plan/1
collective: allreduce
algorithm: exchange
ranks: 2
chunks: 1
scratch: 1
commutative: false
in_place: false
programs:
  0:
    - {op: send, to: 1, buf: in, chunk: 0}
    - {op: recv_reduce, from: 1, buf: in, chunk: 0, dst: out, order: buf_first}
  1:
    - {op: send, to: 0, buf: in, chunk: 0}
    - {op: recv_reduce, from: 0, buf: in, chunk: 0, dst: out, order: recv_first}
)");
}

// In place the combine's operand in[0] is the slot the send reads, so the
// combine must wait for the send: done on arrival it would not (the receive
// does not wait for the send, and must not — the partner's send waits for
// it). The rewrite is refused.
TEST(CopyElimination, RefusesCombineOnArrivalThatRacesWithASend) {
  auto pass = compiler::createCopyElimination();
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: allreduce
algorithm: exchange
ranks: 2
chunks: 1
scratch: 1
commutative: false
in_place: true
programs:
  0:
    - {op: send, to: 1, buf: in, chunk: 0}
    - {op: recv, from: 1, buf: tmp, chunk: 0}
    - {after: [0, 1], op: reduce, buf: in, chunk: 0, src: tmp, dst: out, order: buf_first}
  1:
    - {op: send, to: 0, buf: in, chunk: 0}
    - {op: recv, from: 0, buf: tmp, chunk: 0}
    - {after: [0, 1], op: reduce, buf: in, chunk: 0, src: tmp, dst: out, order: src_first}
)");
  ASSERT_TRUE(compiler::verify(plan).proven());
  EXPECT_FALSE(pass->run(plan));
}

// A copy whose value is the result (p = 1) stays.
TEST(CopyElimination, KeepsACopyThatIsTheResult) {
  auto pass = compiler::createCopyElimination();
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: allreduce
ranks: 1
chunks: 1
programs:
  0:
    - {op: copy, buf: out, chunk: 0, src: in}
)");
  EXPECT_FALSE(pass->run(plan));
  EXPECT_EQ(plan.numOps(), 1u);
}

} // namespace
} // namespace collc::test
