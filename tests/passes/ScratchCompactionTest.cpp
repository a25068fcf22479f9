// tests/passes/ScratchCompactionTest.cpp: compact-scratch reuses tmp slots whose lifetimes are ordered.
#include "PassTestSupport.h"

namespace collc::test {
namespace {

// Two exchange rounds, each receiving into a fresh tmp slot. The first
// round's value is combined before the second receive may start (a
// dependency path orders them), so both rounds share one slot: scratch 3 -> 2
// (rank 1 also keeps its accumulator in tmp).
TEST(ScratchCompaction, ReusesASlotWhoseValueIsDead) {
  auto pass = compiler::createScratchCompaction();
  EXPECT_EQ(runPass(*pass, R"(format: collc-plan/1
collective: allreduce
algorithm: two_rounds
ranks: 2
chunks: 1
scratch: 3
commutative: false
programs:
  0:
    - {op: copy, buf: out, chunk: 0, src: in}
    - {after: [0], op: send, to: 1, buf: out, chunk: 0}
    - {op: recv, from: 1, buf: tmp, chunk: 2}
    - {after: [1, 2], op: reduce, buf: out, chunk: 0, src: tmp, src_chunk: 2, order: buf_first}
    - {after: [3], op: send, to: 1, buf: out, chunk: 0}
    - {after: [3], op: recv, from: 1, buf: tmp, chunk: 1}
    - {after: [4, 5], op: copy, buf: out, chunk: 0, src: tmp, src_chunk: 1}
  1:
    - {op: copy, buf: tmp, chunk: 0, src: in}
    - {after: [0], op: send, to: 0, buf: tmp, chunk: 0}
    - {op: recv, from: 0, buf: tmp, chunk: 1}
    - {after: [1, 2], op: reduce, buf: tmp, chunk: 0, src: tmp, src_chunk: 1, order: src_first}
    - {after: [3], op: send, to: 0, buf: tmp, chunk: 0}
    - {after: [3], op: recv, from: 0, buf: tmp, chunk: 2}
    - {after: [4, 5], op: copy, buf: out, chunk: 0, src: tmp, src_chunk: 2}
)"),
            R"(format: collc-plan/1
collective: allreduce
algorithm: two_rounds
ranks: 2
chunks: 1
scratch: 2
commutative: false
in_place: false
programs:
  0:
    - {op: copy, buf: out, chunk: 0, src: in}
    - {after: [0], op: send, to: 1, buf: out, chunk: 0}
    - {op: recv, from: 1, buf: tmp, chunk: 0}
    - {after: [1, 2], op: reduce, buf: out, chunk: 0, src: tmp, order: buf_first}
    - {after: [3], op: send, to: 1, buf: out, chunk: 0}
    - {after: [3], op: recv, from: 1, buf: tmp, chunk: 0}
    - {after: [4, 5], op: copy, buf: out, chunk: 0, src: tmp}
  1:
    - {op: copy, buf: tmp, chunk: 0, src: in}
    - {after: [0], op: send, to: 0, buf: tmp, chunk: 0}
    - {op: recv, from: 0, buf: tmp, chunk: 1}
    - {after: [1, 2], op: reduce, buf: tmp, chunk: 0, src: tmp, src_chunk: 1, order: src_first}
    - {after: [3], op: send, to: 0, buf: tmp, chunk: 0}
    - {after: [3], op: recv, from: 0, buf: tmp, chunk: 1}
    - {after: [4, 5], op: copy, buf: out, chunk: 0, src: tmp, src_chunk: 1}
)");
}

// A two-slot range moves as a whole, to the bottom of tmp.
TEST(ScratchCompaction, MovesARangeAsAWhole) {
  auto pass = compiler::createScratchCompaction();
  EXPECT_EQ(runPass(*pass, R"(format: collc-plan/1
collective: bcast
algorithm: high_scratch
ranks: 2
root: 0
chunks: 2
scratch: 4
programs:
  0:
    - {op: send, to: 1, buf: out, chunk: 0, count: 2}
  1:
    - {op: recv, from: 0, buf: tmp, chunk: 2, count: 2}
    - {after: [0], op: copy, buf: out, chunk: 0, count: 2, src: tmp, src_chunk: 2}
)"),
            R"(format: collc-plan/1
collective: bcast
algorithm: high_scratch
ranks: 2
root: 0
chunks: 2
scratch: 2
commutative: true
in_place: false
programs:
  0:
    - {op: send, to: 1, buf: out, chunk: 0, count: 2}
  1:
    - {op: recv, from: 0, buf: tmp, chunk: 0, count: 2}
    - {after: [0], op: copy, buf: out, chunk: 0, count: 2, src: tmp}
)");
}

// The root receives both values at once: nothing orders the two lifetimes,
// so they keep two slots.
TEST(ScratchCompaction, KeepsConcurrentValuesApart) {
  auto pass = compiler::createScratchCompaction();
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: reduce
algorithm: flat
ranks: 3
root: 0
chunks: 1
scratch: 2
commutative: false
programs:
  0:
    - {op: copy, buf: out, chunk: 0, src: in}
    - {op: recv, from: 1, buf: tmp, chunk: 0}
    - {op: recv, from: 2, buf: tmp, chunk: 1}
    - {after: [0, 1], op: reduce, buf: out, chunk: 0, src: tmp, order: buf_first}
    - {after: [2, 3], op: reduce, buf: out, chunk: 0, src: tmp, src_chunk: 1, order: buf_first}
  1:
    - {op: send, to: 0, buf: in, chunk: 0}
  2:
    - {op: send, to: 0, buf: in, chunk: 0}
)");
  ASSERT_TRUE(compiler::verify(plan).proven());
  EXPECT_FALSE(pass->run(plan));
  EXPECT_EQ(plan.shape.scratch, 2u);
}

} // namespace
} // namespace collc::test
