// tests/passes/DependencyRelaxationTest.cpp: relax-deps replaces barriers by exact data dependencies.
#include "PassTestSupport.h"

namespace collc::test {
namespace {

// Each rank copies its input, sends one chunk, combines the other and then
// exchanges the results, in barrier steps. Relaxed: each op waits only for
// the ops whose slots it uses — the receive of out[1] for the send of out[1]
// (write after read), the send of out[0] for the combine that produced it.
TEST(DependencyRelaxation, ReplacesStepsByDataDependencies) {
  auto pass = compiler::createDependencyRelaxation();
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
    - {op: copy, buf: out, chunk: 0, count: 2, src: in}
    - {after: [0], op: send, to: 1, buf: out, chunk: 1}
    - {after: [0], op: recv_reduce, from: 1, buf: out, chunk: 0, order: recv_first}
    - {after: [2], op: send, to: 1, buf: out, chunk: 0}
    - {after: [1], op: recv, from: 1, buf: out, chunk: 1}
  1:
    - {op: copy, buf: out, chunk: 0, count: 2, src: in}
    - {after: [0], op: send, to: 0, buf: out, chunk: 0}
    - {after: [0], op: recv_reduce, from: 0, buf: out, chunk: 1, order: recv_first}
    - {after: [2], op: send, to: 0, buf: out, chunk: 1}
    - {after: [1], op: recv, from: 0, buf: out, chunk: 0}
)");
}

// Transitively implied dependencies are dropped: the last copy overwrites
// tmp[0] (after op 0 wrote it and op 1 sent it) but lists only op 1. The
// second send no longer waits for the first (nothing it reads is written),
// yet stays second in the listing, so it still matches the second receive.
TEST(DependencyRelaxation, KeepsListsShortAndListingOrder) {
  auto pass = compiler::createDependencyRelaxation();
  EXPECT_EQ(runPass(*pass, R"(format: collc-plan/1
collective: bcast
algorithm: chain
ranks: 2
root: 0
chunks: 2
scratch: 1
programs:
  0:
    - {step: 0, op: copy, buf: tmp, chunk: 0, src: out}
    - {step: 1, op: send, to: 1, buf: tmp, chunk: 0}
    - {step: 2, op: send, to: 1, buf: out, chunk: 1}
    - {step: 3, op: copy, buf: tmp, chunk: 0, src: out, src_chunk: 1}
  1:
    - {step: 0, op: recv, from: 0, buf: out, chunk: 0}
    - {step: 1, op: recv, from: 0, buf: out, chunk: 1}
)"),
            R"(format: collc-plan/1
collective: bcast
algorithm: chain
ranks: 2
root: 0
chunks: 2
scratch: 1
commutative: true
in_place: false
programs:
  0:
    - {op: copy, buf: tmp, chunk: 0, src: out}
    - {after: [0], op: send, to: 1, buf: tmp, chunk: 0}
    - {op: send, to: 1, buf: out, chunk: 1}
    - {after: [1], op: copy, buf: tmp, chunk: 0, src: out, src_chunk: 1}
  1:
    - {op: recv, from: 0, buf: out, chunk: 0}
    - {op: recv, from: 0, buf: out, chunk: 1}
)");
}

// With in and out aliased (in_place), the send of in[1] reads the slot the
// later receive into out[1] writes: the write-after-read edge stays. With the
// buffers separate the same receive waits for nothing.
TEST(DependencyRelaxation, KeepsWriteAfterReadThroughInPlaceAliasing) {
  auto pass = compiler::createDependencyRelaxation();
  const std::string separate = R"(format: collc-plan/1
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
)";
  const std::string inPlace = R"(format: collc-plan/1
collective: allreduce
algorithm: pair
ranks: 2
chunks: 2
scratch: 0
commutative: true
in_place: true
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
)";
  EXPECT_EQ(runPass(*pass, separate), R"(format: collc-plan/1
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
    - {after: [1], op: send, to: 1, buf: out, chunk: 0}
    - {op: recv, from: 1, buf: out, chunk: 1}
  1:
    - {op: send, to: 0, buf: in, chunk: 0}
    - {op: recv_reduce, from: 0, buf: in, chunk: 1, dst: out, order: recv_first}
    - {after: [1], op: send, to: 0, buf: out, chunk: 1}
    - {op: recv, from: 0, buf: out, chunk: 0}
)");
  EXPECT_EQ(runPass(*pass, inPlace), R"(format: collc-plan/1
collective: allreduce
algorithm: pair
ranks: 2
chunks: 2
scratch: 0
commutative: true
in_place: true
programs:
  0:
    - {op: send, to: 1, buf: in, chunk: 1}
    - {op: recv_reduce, from: 1, buf: in, chunk: 0, dst: out, order: recv_first}
    - {after: [1], op: send, to: 1, buf: out, chunk: 0}
    - {after: [0], op: recv, from: 1, buf: out, chunk: 1}
  1:
    - {op: send, to: 0, buf: in, chunk: 0}
    - {op: recv_reduce, from: 0, buf: in, chunk: 1, dst: out, order: recv_first}
    - {after: [1], op: send, to: 0, buf: out, chunk: 1}
    - {after: [0], op: recv, from: 0, buf: out, chunk: 0}
)");
}

TEST(DependencyRelaxation, LeavesAnExactPlanUnchanged) {
  auto pass = compiler::createDependencyRelaxation();
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: allreduce
algorithm: pair
ranks: 2
chunks: 2
scratch: 0
commutative: true
in_place: false
programs:
  0:
    - {op: copy, buf: out, chunk: 0, count: 2, src: in}
    - {after: [0], op: send, to: 1, buf: out, chunk: 1}
    - {after: [0], op: recv_reduce, from: 1, buf: out, chunk: 0, order: recv_first}
    - {after: [2], op: send, to: 1, buf: out, chunk: 0}
    - {after: [1], op: recv, from: 1, buf: out, chunk: 1}
  1:
    - {op: copy, buf: out, chunk: 0, count: 2, src: in}
    - {after: [0], op: send, to: 0, buf: out, chunk: 0}
    - {after: [0], op: recv_reduce, from: 0, buf: out, chunk: 1, order: recv_first}
    - {after: [2], op: send, to: 0, buf: out, chunk: 1}
    - {after: [1], op: recv, from: 0, buf: out, chunk: 0}
)");
  const std::string before = ir::printPlan(plan);
  EXPECT_FALSE(pass->run(plan));
  EXPECT_EQ(ir::printPlan(plan), before);
}

} // namespace
} // namespace collc::test
