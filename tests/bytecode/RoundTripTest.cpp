// tests/bytecode/RoundTripTest.cpp: plan → lower → loader → disassembler → the
// same plan, for every generator and for hand-made plans covering every
// encoding path.
#include "compiler/Disasm.h"
#include "compiler/Lower.h"
#include "compiler/Prove.h"
#include "ir/PlanIO.h"
#include "runtime/bytecode/Encoder.h"
#include "runtime/bytecode/Loader.h"
#include "schedules/Generators.h"
#include "tests/bytecode/LoaderCorpus.h"

#include <gtest/gtest.h>

#include <set>

using namespace collc;

namespace {

/// Lowers `plan` twice (checking determinism), disassembles and compares.
void expectRoundTrip(const ir::Plan &plan, const std::string &what) {
  SCOPED_TRACE(what);
  const std::vector<uint8_t> bytes = compiler::lower(plan);
  EXPECT_EQ(bytes, compiler::lower(plan)) << "lowering is not deterministic";
  llvm::Expected<ir::Plan> back = compiler::disassemble(bytes);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(ir::printPlan(*back), ir::printPlan(plan));
  EXPECT_TRUE(*back == plan);
  // The encoder reproduces the bytes from the loaded plan.
  rt::LoadedPlan loaded;
  ASSERT_TRUE(rt::load(bytes, loaded).ok());
  EXPECT_EQ(rt::encode(loaded), bytes);
}

ir::Plan parse(const char *text) {
  llvm::Expected<ir::Plan> plan = ir::parsePlan(text, "test");
  if (!plan) {
    ADD_FAILURE() << llvm::toString(plan.takeError());
    return {};
  }
  return std::move(*plan);
}

std::vector<uint32_t> sweep() {
  std::vector<uint32_t> ps;
  for (uint32_t p = 1; p <= 17; ++p)
    ps.push_back(p);
  ps.push_back(32);
  ps.push_back(64);
  return ps;
}

TEST(BytecodeRoundTrip, EveryGeneratorAndRankCount) {
  size_t plans = 0;
  for (const sched::Algorithm &a : sched::algorithms()) {
    for (uint32_t p : sweep()) {
      std::set<uint32_t> roots = {0};
      if (ir::hasRoot(a.collective))
        roots = {0, p / 2, p - 1};
      for (uint32_t root : roots) {
        sched::GenOptions o;
        o.ranks = p;
        o.root = root;
        if (!a.accepts(o))
          continue; // the file's `require` refuses this p
        llvm::Expected<ir::Plan> plan = sched::generate(a.collective, a.name, o);
        ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
        expectRoundTrip(*plan, (ir::name(a.collective) + " " + a.name).str() + " p=" +
                                   std::to_string(p) + " root=" + std::to_string(root));
        ++plans;
      }
    }
  }
  EXPECT_GT(plans, 0u);
}

TEST(BytecodeRoundTrip, EveryEncodingPath) {
  expectRoundTrip(parse(test::encodingPathsPlan), "encoding-paths");
}

TEST(BytecodeRoundTrip, LargeValuesNeedMultiByteLeb128) {
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: reduce
algorithm: "big values \u00e9"
ranks: 2
root: 1
chunks: 16777216
scratch: 16777216
commutative: true
programs:
  0:
    - {step: 4294967295, op: send, to: 1, buf: in, chunk: 16000000, count: 777216}
    - {op: copy, buf: tmp, chunk: 16777215, src: in, src_chunk: 0}
  1:
    - {step: 2097152, op: recv_reduce, from: 0, buf: tmp, chunk: 0, count: 777216, order: buf_first}
    - {after: [0], op: reduce, buf: out, chunk: 16777000, src: tmp, src_chunk: 16777215, order: src_first}
)");
  expectRoundTrip(plan, "large values");
}

TEST(BytecodeRoundTrip, EveryCollectiveAndBuffer) {
  // One tiny plan per collective; only well-formedness and pairing matter.
  const char *plans[] = {
      R"(format: collc-plan/1
collective: bcast
ranks: 2
root: 1
chunks: 2
programs:
  0: [{op: recv, from: 1, buf: out, chunk: 0, count: 2}]
  1: [{op: send, to: 0, buf: out, chunk: 0, count: 2}]
)",
      R"(format: collc-plan/1
collective: allgather
ranks: 2
chunks: 4
scratch: 1
in_place: true
programs:
  0:
    - {op: copy, buf: out, chunk: 0, count: 2, src: in}
    - {step: 1, op: send, to: 1, buf: in, chunk: 1}
    - {step: 1, op: recv, from: 1, buf: tmp, chunk: 0}
  1:
    - {op: recv, from: 0, buf: out, chunk: 1}
    - {after: [0], op: send, to: 0, buf: out, chunk: 3}
)",
      R"(format: collc-plan/1
collective: reduce_scatter_block
ranks: 2
chunks: 4
commutative: false
programs:
  0: [{op: copy, buf: out, chunk: 0, count: 2, src: in}]
  1: [{op: copy, buf: out, chunk: 1, src: in, src_chunk: 3}]
)",
      R"(format: collc-plan/1
collective: scan
ranks: 1
chunks: 1
programs:
  0: [{op: copy, buf: out, chunk: 0, src: in}]
)",
      R"(format: collc-plan/1
collective: exscan
ranks: 2
chunks: 1
programs:
  0: [{op: send, to: 1, buf: in, chunk: 0}]
  1: [{op: recv, from: 0, buf: out, chunk: 0}]
)",
  };
  for (const char *text : plans)
    expectRoundTrip(parse(text), text);
}

TEST(BytecodeRoundTrip, EmptyAfterListIsKept) {
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: allreduce
ranks: 1
chunks: 2
programs:
  0:
    - {op: copy, buf: out, chunk: 0, count: 2, src: in}
    - {step: 5, op: reduce, buf: out, chunk: 0, src: in, order: buf_first}
    - {op: reduce, buf: out, chunk: 1, src: in, order: src_first}
)");
  plan.programs[0].ops[2].deps = ir::DepKind::After; // an explicit, empty list
  expectRoundTrip(plan, "empty after");
}

TEST(BytecodeEncoding, RingOpsAreThreeBytes) {
  sched::GenOptions o;
  o.ranks = 64;
  ir::Plan plan = *sched::generate(ir::Collective::Allreduce, "ring", o);
  rt::LoadedPlan loaded;
  const std::vector<uint8_t> bytes = compiler::lower(plan);
  ASSERT_TRUE(rt::load(bytes, loaded).ok());
  // Op 1 of rank 0 is `send out[0] to 1` at step 1: opcode, peer +1, chunk 0.
  const auto &ops = loaded.programs[0].ops;
  EXPECT_EQ(ops[2].offset - ops[1].offset, 3u);
  EXPECT_EQ(bytes[ops[1].offset], 0x20);     // send, step Δ1
  EXPECT_EQ(bytes[ops[1].offset + 1], 0x02); // relative peer +1
  EXPECT_EQ(bytes[ops[2].offset], 0x12);     // recv_reduce.rf, step Δ0
  EXPECT_EQ(bytes[ops[2].offset + 1], 0x01); // relative peer -1
  EXPECT_LE(double(bytes.size()) / double(plan.numOps()), 4.0);
}

TEST(BytecodeEncoding, InvalidPeersLowerToFilesTheLoaderRefuses) {
  ir::Plan plan = parse(R"(format: collc-plan/1
collective: allreduce
ranks: 2
chunks: 1
programs:
  0: [{op: send, to: 0, buf: out, chunk: 0}]
  1: [{op: recv, from: 7, buf: out, chunk: 0}]
)");
  llvm::Expected<ir::Plan> back = compiler::disassemble(compiler::lower(plan));
  ASSERT_FALSE(bool(back));
  EXPECT_EQ(llvm::toString(back.takeError()), "offset 0x22: rank 0 op 0: peer 0 is the rank itself");
}

/// The library's allreduce `name` for `o`.
ir::Plan allreduce(const char *name, const sched::GenOptions &o) {
  return sched::findAlgorithm(ir::Collective::Allreduce, name)->build(o);
}

TEST(BytecodeRoundTrip, ProofStatusRoundTrips) {
  sched::GenOptions o;
  o.ranks = 5;
  const ir::Plan plan = allreduce("ring", o);
  for (rt::Proof proof : {rt::Proof{false, false}, rt::Proof{true, false}, rt::Proof{true, true}}) {
    rt::Proof back;
    llvm::Expected<ir::Plan> p = compiler::disassemble(compiler::lower(plan, proof), &back);
    ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
    EXPECT_EQ(*p, plan);
    EXPECT_EQ(back, proof);
  }
}

// compile records the strongest properties proven: a plan that claims only
// commutative operations but keeps rank order, and one correct in place that
// does not say so, are recorded as such; a ring keeps its claim.
TEST(ProveStrongest, RaisesClaimsToWhatIsProven) {
  sched::GenOptions o;
  o.ranks = 6;
  ir::Plan rab = allreduce("rabenseifner", o);
  rab.shape.commutative = true;
  rab.shape.inPlace = false;
  compiler::Proven p = compiler::proveStrongest(rab);
  ASSERT_TRUE(p.result.proven());
  EXPECT_FALSE(rab.shape.commutative);
  EXPECT_TRUE(rab.shape.inPlace);
  EXPECT_EQ(p.proof, (rt::Proof{true, true}));

  ir::Plan ring = allreduce("ring", o);
  p = compiler::proveStrongest(ring);
  ASSERT_TRUE(p.result.proven());
  EXPECT_TRUE(ring.shape.commutative);
  EXPECT_EQ(p.proof, (rt::Proof{true, true}));

  ring.shape.commutative = false; // a false claim: nothing proven, nothing changed
  p = compiler::proveStrongest(ring);
  EXPECT_FALSE(p.result.proven());
  EXPECT_FALSE(ring.shape.commutative);
  EXPECT_EQ(p.proof, (rt::Proof{false, false}));
}

TEST(Disasm, ReportsTheLoaderMessage) {
  const uint8_t junk[] = {'j', 'u', 'n', 'k'};
  llvm::Expected<ir::Plan> plan = compiler::disassemble(junk);
  ASSERT_FALSE(bool(plan));
  EXPECT_EQ(llvm::toString(plan.takeError()),
            "offset 0x0: not a compiled plan: magic 6a 75 6e 6b, expected 7f 43 50 4c");
}

} // namespace
