// tests/passes/DeadOpEliminationTest.cpp: dce removes work that no required output needs.
#include "PassTestSupport.h"

namespace collc::test {
namespace {

// A reduce to rank 0 in which the root also sends its result to rank 2,
// which sends it on to rank 1, which receives it into tmp after it is done:
// nothing reads that value, so the whole chain goes — both ends of each of
// its messages — while the real reduction stays.
TEST(DeadOpElimination, RemovesWorkThatNeverReachesTheRoot) {
  auto pass = compiler::createDeadOpElimination();
  EXPECT_EQ(runPass(*pass, R"(format: collc-plan/1
collective: reduce
algorithm: wasteful
ranks: 3
root: 0
chunks: 1
scratch: 1
commutative: false
programs:
  0:
    - {op: copy, buf: out, chunk: 0, src: in}
    - {after: [0], op: recv_reduce, from: 1, buf: out, chunk: 0, order: buf_first}
    - {after: [1], op: send, to: 2, buf: out, chunk: 0}
  1:
    - {op: copy, buf: tmp, chunk: 0, src: in}
    - {after: [0], op: recv_reduce, from: 2, buf: tmp, chunk: 0, order: buf_first}
    - {after: [1], op: send, to: 0, buf: tmp, chunk: 0}
    - {after: [2], op: recv, from: 2, buf: tmp, chunk: 0}
  2:
    - {op: send, to: 1, buf: in, chunk: 0}
    - {op: recv, from: 0, buf: tmp, chunk: 0}
    - {after: [0, 1], op: send, to: 1, buf: tmp, chunk: 0}
)"),
            R"(format: collc-plan/1
collective: reduce
algorithm: wasteful
ranks: 3
root: 0
chunks: 1
scratch: 1
commutative: false
in_place: false
programs:
  0:
    - {op: copy, buf: out, chunk: 0, src: in}
    - {after: [0], op: recv_reduce, from: 1, buf: out, chunk: 0, order: buf_first}
  1:
    - {op: copy, buf: tmp, chunk: 0, src: in}
    - {after: [0], op: recv_reduce, from: 2, buf: tmp, chunk: 0, order: buf_first}
    - {after: [1], op: send, to: 0, buf: tmp, chunk: 0}
  2:
    - {op: send, to: 1, buf: in, chunk: 0}
)");
}

// In exscan rank 0's out is undefined by definition (MPI), so the copy into
// it is dead.
TEST(DeadOpElimination, RemovesWritesToOutputsThatAreNotRequired) {
  auto pass = compiler::createDeadOpElimination();
  EXPECT_EQ(runPass(*pass, R"(format: collc-plan/1
collective: exscan
algorithm: pair
ranks: 2
chunks: 1
programs:
  0:
    - {op: copy, buf: out, chunk: 0, src: in}
    - {op: send, to: 1, buf: in, chunk: 0}
  1:
    - {op: recv, from: 0, buf: out, chunk: 0}
)"),
            R"(format: collc-plan/1
collective: exscan
algorithm: pair
ranks: 2
chunks: 1
scratch: 0
commutative: true
in_place: false
programs:
  0:
    - {op: send, to: 1, buf: in, chunk: 0}
  1:
    - {op: recv, from: 0, buf: out, chunk: 0}
)");
}

TEST(DeadOpElimination, KeepsAPlanWithoutDeadOps) {
  auto pass = compiler::createDeadOpElimination();
  ir::Plan plan = parse(pairPlan);
  EXPECT_FALSE(pass->run(plan));
}

} // namespace
} // namespace collc::test
