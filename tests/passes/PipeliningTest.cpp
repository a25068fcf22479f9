// tests/passes/PipeliningTest.cpp: pipeline splits messages into segments with exact dependencies.
#include "PassTestSupport.h"

namespace collc::test {
namespace {

// A chain 2 -> 1 -> 0: with two segments rank 1 forwards segment 0 as soon
// as it has combined it, while segment 1 is still arriving; chunks and
// scratch double.
TEST(Pipelining, ForwardsEachSegmentAsSoonAsItIsCombined) {
  auto pass = compiler::createPipelining(2);
  EXPECT_EQ(runPass(*pass, R"(format: collc-plan/1
collective: reduce
algorithm: chain
ranks: 3
root: 0
chunks: 1
scratch: 1
commutative: false
programs:
  0:
    - {op: recv_reduce, from: 1, buf: in, chunk: 0, dst: out, order: buf_first}
  1:
    - {op: recv_reduce, from: 2, buf: in, chunk: 0, dst: tmp, order: buf_first}
    - {after: [0], op: send, to: 0, buf: tmp, chunk: 0}
  2:
    - {op: send, to: 1, buf: in, chunk: 0}
)", nullptr, /*idempotent=*/false),
            R"(format: collc-plan/1
collective: reduce
algorithm: chain
ranks: 3
root: 0
chunks: 2
scratch: 2
commutative: false
in_place: false
programs:
  0:
    - {op: recv_reduce, from: 1, buf: in, chunk: 0, dst: out, order: buf_first}
    - {op: recv_reduce, from: 1, buf: in, chunk: 1, dst: out, order: buf_first}
  1:
    - {op: recv_reduce, from: 2, buf: in, chunk: 0, dst: tmp, order: buf_first}
    - {op: recv_reduce, from: 2, buf: in, chunk: 1, dst: tmp, order: buf_first}
    - {after: [0], op: send, to: 0, buf: tmp, chunk: 0}
    - {after: [1], op: send, to: 0, buf: tmp, chunk: 1}
  2:
    - {op: send, to: 1, buf: in, chunk: 0}
    - {op: send, to: 1, buf: in, chunk: 1}
)");
}

// Ranges scale with the chunks: a three-chunk message over 6 chunks is two
// segments of three slots each, in[0..2] and in[3..5], at both ends.
TEST(Pipelining, ScalesMultiChunkRanges) {
  auto pass = compiler::createPipelining(2);
  EXPECT_EQ(runPass(*pass, R"(format: collc-plan/1
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
)", nullptr, /*idempotent=*/false),
            R"(format: collc-plan/1
collective: allreduce
algorithm: pieces
ranks: 2
chunks: 6
scratch: 0
commutative: false
in_place: false
programs:
  0:
    - {op: send, to: 1, buf: in, chunk: 0, count: 3}
    - {op: send, to: 1, buf: in, chunk: 3, count: 3}
    - {op: recv_reduce, from: 1, buf: in, chunk: 0, count: 3, dst: out, order: buf_first}
    - {op: recv_reduce, from: 1, buf: in, chunk: 3, count: 3, dst: out, order: buf_first}
  1:
    - {op: send, to: 0, buf: in, chunk: 0, count: 3}
    - {op: send, to: 0, buf: in, chunk: 3, count: 3}
    - {op: recv_reduce, from: 0, buf: in, chunk: 0, count: 3, dst: out, order: recv_first}
    - {op: recv_reduce, from: 0, buf: in, chunk: 3, count: 3, dst: out, order: recv_first}
)");
}

TEST(Pipelining, OneSegmentLeavesThePlanAsItIs) {
  auto pass = compiler::createPipelining(1);
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: reduce
algorithm: chain
ranks: 3
root: 0
chunks: 1
scratch: 1
commutative: false
programs:
  0:
    - {op: recv_reduce, from: 1, buf: in, chunk: 0, dst: out, order: buf_first}
  1:
    - {op: recv_reduce, from: 2, buf: in, chunk: 0, dst: tmp, order: buf_first}
    - {after: [0], op: send, to: 0, buf: tmp, chunk: 0}
  2:
    - {op: send, to: 1, buf: in, chunk: 0}
)");
  EXPECT_FALSE(pass->run(plan));
}

} // namespace
} // namespace collc::test
