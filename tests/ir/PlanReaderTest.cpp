// tests/ir/PlanReaderTest.cpp: every kind of malformed plan text is refused
// with its class, position and reason.
#include "ir/PlanIO.h"

#include <gtest/gtest.h>

using namespace collc;

namespace {

// A valid 2-rank plan; tests splice mistakes into it.
const char *const header = "format: collc-plan/1\n"
                           "collective: allreduce\n"
                           "algorithm: t\n"
                           "ranks: 2\n"
                           "chunks: 2\n"
                           "scratch: 1\n";

std::string withOps(const std::string &ops0, const std::string &extraHeader = "") {
  return std::string(header) + extraHeader + "programs:\n  0:\n" + ops0 + "  1: []\n";
}

/// The reader's error for `text`, or "" when it parses.
std::string errorOf(const std::string &text) {
  llvm::Expected<ir::Plan> p = ir::parsePlan(text, "t.yaml");
  if (p)
    return "";
  return llvm::toString(p.takeError());
}

TEST(PlanReader, AcceptsTheBasePlan) {
  EXPECT_EQ(errorOf(withOps("    - {op: copy, buf: out, chunk: 0, count: 2, src: in}\n")), "");
}

TEST(PlanReader, RejectsMalformedYamlWithItsPosition) {
  EXPECT_EQ(errorOf(withOps("    - {op: copy, buf: out, chunk: 0\n")),
            "t.yaml:10:4: syntax: end of map flow not found");
}

TEST(PlanReader, RejectsAPlanThatIsNotAMapping) {
  EXPECT_EQ(errorOf("- 1\n- 2\n"),
            "t.yaml:1:1: syntax: expected a plan: a mapping that starts with 'format: "
            "collc-plan/1'");
  EXPECT_EQ(errorOf(""), "t.yaml:1:1: syntax: expected a plan: a mapping that starts "
                         "with 'format: collc-plan/1'");
}

TEST(PlanReader, RejectsUnknownTopLevelKeys) {
  EXPECT_EQ(errorOf(withOps("", "colour: blue\n")),
            "t.yaml:7:1: syntax: unknown key 'colour' in plan (expected one of: format, "
            "collective, algorithm, ranks, root, chunks, scratch, commutative, in_place, "
            "programs)");
}

TEST(PlanReader, RejectsUnknownOpKeys) {
  EXPECT_EQ(errorOf(withOps("    - {op: send, to: 1, buf: out, chunk: 0, tag: 3}\n")),
            "t.yaml:9:45: syntax: unknown key 'tag' in send op (expected one of: op, step, "
            "after, buf, chunk, count, to)");
}

TEST(PlanReader, RejectsKeysOfAnotherOpKind) {
  EXPECT_EQ(errorOf(withOps("    - {op: send, from: 1, buf: out, chunk: 0}\n")),
            "t.yaml:9:18: syntax: unknown key 'from' in send op (expected one of: op, step, "
            "after, buf, chunk, count, to)");
}

TEST(PlanReader, RejectsDuplicateKeys) {
  EXPECT_EQ(errorOf(withOps("", "ranks: 3\n")),
            "t.yaml:7:1: syntax: duplicate key 'ranks' in plan");
}

TEST(PlanReader, RejectsWrongTypes) {
  EXPECT_EQ(errorOf("format: collc-plan/1\ncollective: allreduce\nranks: two\nchunks: 1\n"
                    "programs: {}\n"),
            "t.yaml:3:8: syntax: expected a non-negative integer for 'ranks', got 'two'");
  EXPECT_EQ(errorOf(withOps("", "commutative: maybe\n")),
            "t.yaml:7:14: syntax: expected true or false for 'commutative', got 'maybe'");
  EXPECT_EQ(errorOf(withOps("    - {op: send, to: 1.5, buf: out, chunk: 0}\n")),
            "t.yaml:9:22: syntax: expected an integer rank for 'to', got '1.5'");
  EXPECT_EQ(errorOf(withOps("    - {op: send, to: \"1\", buf: out, chunk: 0}\n")),
            "t.yaml:9:22: syntax: expected an integer rank for 'to', got '1'");
  EXPECT_EQ(errorOf(withOps("    - {op: send, to: -2147483649, buf: out, chunk: 0}\n")),
            "t.yaml:9:22: syntax: expected an integer rank for 'to', got '-2147483649'");
  EXPECT_EQ(errorOf(withOps("    - {after: 0, op: send, to: 1, buf: out, chunk: 0}\n")),
            "t.yaml:9:15: syntax: expected a list of op indices for 'after', like [0, 2]");
  EXPECT_EQ(errorOf(withOps("    - {op: send, to: 1, buf: out, chunk: 99999999999}\n")),
            "t.yaml:9:42: syntax: expected a non-negative integer for 'chunk', got "
            "'99999999999'");
  EXPECT_EQ(errorOf(std::string(header) + "programs: [1]\n"),
            "t.yaml:7:11: syntax: expected 'programs' to map each rank to its list of ops");
  EXPECT_EQ(errorOf(std::string(header) + "programs:\n  0: 5\n"),
            "t.yaml:8:6: syntax: expected a list of ops for rank 0");
  EXPECT_EQ(errorOf(std::string(header) + "programs:\n  0: [5]\n"),
            "t.yaml:8:7: syntax: expected an op mapping like {op: send, to: 1, buf: out, "
            "chunk: 0}");
}

// Out-of-range peers, negative ones included, are the verifier's `mismatch`,
// not reader errors; they print back as written.
TEST(PlanReader, KeepsNegativePeersForTheVerifier) {
  using namespace collc::ir;
  llvm::Expected<Plan> p = parsePlan(withOps("    - {op: send, to: -1, buf: out, chunk: 0}\n"),
                                     "t.yaml");
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_EQ(peerValue(p->programs[0].ops[0].peer), -1);
  EXPECT_NE(printPlan(*p).find("{op: send, to: -1, buf: out, chunk: 0}"), std::string::npos);
  EXPECT_EQ(describe(p->programs[0].ops[0]), "send out[0] to -1");
}

TEST(PlanReader, RejectsMissingKeys) {
  EXPECT_EQ(errorOf("format: collc-plan/1\ncollective: allreduce\nranks: 2\nprograms: {}\n"),
            "t.yaml:1:1: syntax: plan is missing 'chunks'");
  EXPECT_EQ(errorOf(withOps("    - {op: send, buf: out, chunk: 0}\n")),
            "t.yaml:9:7: syntax: send op is missing 'to'");
  EXPECT_EQ(errorOf(withOps("    - {to: 1, buf: out, chunk: 0}\n")),
            "t.yaml:9:7: syntax: op is missing its 'op' key");
  EXPECT_EQ(errorOf("format: collc-plan/1\ncollective: reduce\nranks: 2\nchunks: 1\n"
                    "programs: {}\n"),
            "t.yaml:1:1: syntax: plan is missing 'root'");
}

TEST(PlanReader, RejectsUnknownNames) {
  EXPECT_EQ(errorOf("format: collc-plan/1\ncollective: alltoallw\nranks: 2\nchunks: 1\n"
                    "programs: {}\n"),
            "t.yaml:2:13: syntax: unknown collective 'alltoallw' (expected allreduce, reduce, "
            "reduce_scatter_block, allgather, bcast, scan, exscan, alltoall, gather, scatter or barrier)");
  EXPECT_EQ(errorOf(withOps("    - {op: put, to: 1, buf: out, chunk: 0}\n")),
            "t.yaml:9:12: syntax: unknown op 'put' (expected send, recv, recv_reduce, "
            "reduce or copy)");
  EXPECT_EQ(errorOf(withOps("    - {op: send, to: 1, buf: scratch, chunk: 0}\n")),
            "t.yaml:9:30: syntax: unknown buffer 'scratch' for 'buf' (expected in, out or "
            "tmp)");
  EXPECT_EQ(errorOf(withOps(
                "    - {op: recv_reduce, from: 1, buf: out, chunk: 0, order: src_first}\n")),
            "t.yaml:9:61: syntax: unknown order 'src_first' for recv_reduce (expected "
            "recv_first or buf_first)");
  EXPECT_EQ(errorOf("format: collc-plan/one\n"),
            "t.yaml:1:9: syntax: unknown format 'collc-plan/one' (expected collc-plan/1)");
}

// Found by the plan fuzzer: the name went into the .cplan, whose loader refuses
// it, so `collc compile` failed with a bytecode offset for a YAML input.
TEST(PlanReader, RejectsAnAlgorithmNameThatIsNotUtf8) {
  auto named = [](const std::string &name) {
    std::string text = withOps("    - {op: copy, buf: out, chunk: 0, count: 2, src: in}\n");
    return text.replace(text.find("algorithm: t\n"), 13, "algorithm: " + name + "\n");
  };
  const char *const error = "t.yaml:3:12: syntax: the algorithm name is not valid UTF-8";
  EXPECT_EQ(errorOf(named("b\xc3(ial")), error);  // a lead byte without its continuation
  EXPECT_EQ(errorOf(named("\xc0\xafx")), error);  // an overlong '/'
  EXPECT_EQ(errorOf(named("\xed\xa0\x80")), error); // a surrogate
  EXPECT_EQ(errorOf(named("\"r\xc3\xa9" "duire\"")), "");
}

TEST(PlanReader, RejectsAFutureFormatNamingBothVersions) {
  EXPECT_EQ(errorOf("format: collc-plan/2\ncollective: allreduce\n"),
            "t.yaml:1:9: invalid: unsupported format 'collc-plan/2': this collc reads "
            "collc-plan/1");
}

TEST(PlanReader, RejectsOutOfRangeShapes) {
  auto shape = [](const std::string &lines) {
    return errorOf("format: collc-plan/1\n" + lines + "programs: {}\n");
  };
  EXPECT_EQ(shape("collective: allreduce\nranks: 0\nchunks: 1\n"),
            "t.yaml:3:8: invalid: ranks 0 out of range (1..1048576)");
  EXPECT_EQ(shape("collective: allreduce\nranks: 2\nchunks: 0\n"),
            "t.yaml:4:9: invalid: chunks 0 out of range (1..16777216)");
  EXPECT_EQ(shape("collective: reduce\nranks: 4\nroot: 4\nchunks: 1\n"),
            "t.yaml:4:7: invalid: root 4 out of range (ranks = 4)");
  EXPECT_EQ(shape("collective: allgather\nranks: 4\nchunks: 6\n"),
            "t.yaml:4:9: invalid: allgather needs chunks to be a multiple of ranks "
            "(chunks = 6, ranks = 4)");
  EXPECT_EQ(shape("collective: bcast\nranks: 2\nroot: 0\nchunks: 1\nin_place: true\n"),
            "t.yaml:6:11: invalid: in_place is not supported for bcast");
  EXPECT_EQ(shape("collective: allreduce\nranks: 2\nroot: 1\nchunks: 1\n"),
            "t.yaml:4:1: invalid: 'root' is only allowed for reduce and bcast, not allreduce");
  // Even root 0, the value the shape holds for a collective without one.
  EXPECT_EQ(shape("collective: scan\nranks: 2\nroot: 0\nchunks: 1\n"),
            "t.yaml:4:1: invalid: 'root' is only allowed for reduce and bcast, not scan");
  // A value of the wrong type stays syntax.
  EXPECT_EQ(shape("collective: allreduce\nranks: 2\nroot: x\nchunks: 1\n"),
            "t.yaml:4:7: syntax: expected a non-negative integer for 'root', got 'x'");
}

TEST(PlanReader, RejectsOutOfRangeProgramRanks) {
  EXPECT_EQ(errorOf(std::string(header) + "programs:\n  2: []\n"),
            "t.yaml:8:3: invalid: rank 2 out of range (ranks = 2)");
  EXPECT_EQ(errorOf(std::string(header) + "programs:\n  0: []\n  0: []\n"),
            "t.yaml:9:3: syntax: rank 0 listed twice in 'programs'");
}

TEST(PlanReader, RejectsOutOfRangeSlots) {
  EXPECT_EQ(errorOf(withOps("    - {op: send, to: 1, buf: out, chunk: 2}\n")),
            "t.yaml:9:7: invalid: rank 0, op 0 (send out[2] to 1): slot out[2] out of range "
            "(out has 2 slots)");
  EXPECT_EQ(errorOf(withOps("    - {op: send, to: 1, buf: tmp, chunk: 0, count: 2}\n")),
            "t.yaml:9:7: invalid: rank 0, op 0 (send tmp[0..1] to 1): slot tmp[0..1] out of "
            "range (tmp has 1 slot)");
  EXPECT_EQ(errorOf(withOps("    - {op: send, to: 1, buf: out, chunk: 0, count: 0}\n")),
            "t.yaml:9:7: invalid: rank 0, op 0 (send out[0, no slots] to 1): slot count must be "
            "at least 1");
  EXPECT_EQ(errorOf(withOps("    - {op: copy, buf: out, chunk: 0, src: in, src_chunk: 5}\n")),
            "t.yaml:9:7: invalid: rank 0, op 0 (copy out[0] from in[5]): source in[5] out "
            "of range (in has 2 slots)");
  EXPECT_EQ(errorOf(withOps(
                "    - {op: copy, buf: out, chunk: 0, count: 2, src: out, src_chunk: 1}\n")),
            "t.yaml:9:7: invalid: rank 0, op 0 (copy out[0..1] from out[1..2]): source "
            "out[1..2] out of range (out has 2 slots)");
  EXPECT_EQ(errorOf(withOps("    - {op: copy, buf: tmp, chunk: 0, src: tmp}\n")),
            "t.yaml:9:7: invalid: rank 0, op 0 (copy tmp[0] from tmp[0]): source tmp[0] "
            "overlaps destination tmp[0]");
}

TEST(PlanReader, RejectsBuffersARankDoesNotHave) {
  const char *reduce = "format: collc-plan/1\ncollective: reduce\nranks: 2\nroot: 0\n"
                       "chunks: 1\nprograms:\n  1:\n    - {op: send, to: 0, buf: out, "
                       "chunk: 0}\n";
  EXPECT_EQ(errorOf(reduce), "t.yaml:8:7: invalid: rank 1, op 0 (send out[0] to 0): rank 1 "
                             "has no out buffer (in reduce only the root has one)");
  const char *bcast = "format: collc-plan/1\ncollective: bcast\nranks: 2\nroot: 0\n"
                      "chunks: 1\nprograms:\n  1:\n    - {op: send, to: 0, buf: in, "
                      "chunk: 0}\n";
  EXPECT_EQ(errorOf(bcast), "t.yaml:8:7: invalid: rank 1, op 0 (send in[0] to 0): bcast has "
                            "no in buffer");
}

TEST(PlanReader, RejectsCombiningOpsInDataCollectives) {
  const char *text = "format: collc-plan/1\ncollective: allgather\nranks: 2\nchunks: 2\n"
                     "programs:\n  0:\n    - {op: recv_reduce, from: 1, buf: out, chunk: 0}\n";
  EXPECT_EQ(errorOf(text), "t.yaml:7:7: invalid: rank 0, op 0 (recv_reduce out[0] from 1): "
                           "recv_reduce is not allowed in an allgather plan (it does not "
                           "reduce)");
}

TEST(PlanReader, RejectsBadDependencies) {
  EXPECT_EQ(errorOf(withOps("    - {after: [0], op: send, to: 1, buf: out, chunk: 0}\n")),
            "t.yaml:9:7: invalid: rank 0, op 0 (send out[0] to 1): after: op 0 is not "
            "earlier than this op (0)");
  EXPECT_EQ(errorOf(withOps("    - {op: send, to: 1, buf: out, chunk: 0}\n"
                            "    - {after: [0, 0], op: send, to: 1, buf: out, chunk: 1}\n")),
            "t.yaml:10:7: invalid: rank 0, op 1 (send out[1] to 1): after: op 0 is listed "
            "twice");
  EXPECT_EQ(errorOf(withOps("    - {step: 2, op: send, to: 1, buf: out, chunk: 0}\n"
                            "    - {step: 1, op: send, to: 1, buf: out, chunk: 1}\n")),
            "t.yaml:10:7: invalid: rank 0, op 1 (send out[1] to 1): step 1 after step 2 "
            "(op 0): steps must not decrease");
  EXPECT_EQ(errorOf(withOps("    - {step: 0, after: [], op: send, to: 1, buf: out, chunk: "
                            "0}\n")),
            "t.yaml:9:17: syntax: an op takes at most one of 'step' and 'after'");
}

TEST(PlanReader, ChecksThreeAddressForms) {
  EXPECT_EQ(errorOf(withOps("    - {op: recv_reduce, from: 1, buf: in, chunk: 0, dst: out, "
                            "dst_chunk: 2}\n")),
            "t.yaml:9:7: invalid: rank 0, op 0 (recv_reduce in[0] from 1 into out[2]): "
            "destination out[2] out of range (out has 2 slots)");
  EXPECT_EQ(errorOf(withOps("    - {op: reduce, buf: out, chunk: 0, src: in, dst: out}\n")),
            "t.yaml:9:7: invalid: rank 0, op 0 (reduce out[0] from in[0] into out[0]): "
            "destination out[0] overlaps out[0] (omit dst to combine in place)");
  EXPECT_EQ(errorOf(withOps("    - {op: recv_reduce, from: 1, buf: out, chunk: 0, dst_chunk: "
                            "1}\n")),
            "t.yaml:9:54: syntax: 'dst_chunk' needs 'dst'");
  EXPECT_EQ(errorOf(withOps("    - {op: copy, buf: out, chunk: 0, src: in, dst: tmp}\n")),
            "t.yaml:9:47: syntax: unknown key 'dst' in copy op (expected one of: op, step, "
            "after, buf, chunk, count, src, src_chunk)");
}

TEST(PlanReader, ReportsUnreadableFiles) {
  llvm::Expected<ir::Plan> p = ir::readPlanFile("/nonexistent/plan.yaml");
  ASSERT_FALSE(p);
  EXPECT_EQ(llvm::toString(p.takeError()),
            "cannot read '/nonexistent/plan.yaml': No such file or directory");
}

TEST(PlanReader, ReadsDefaultsForOptionalKeys) {
  llvm::Expected<ir::Plan> p = ir::parsePlan(
      "format: collc-plan/1\ncollective: allreduce\nranks: 1\nchunks: 1\n"
      "programs:\n  0:\n    - {op: copy, buf: out, chunk: 0, src: in}\n",
      "t.yaml");
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_EQ(p->algorithm, "custom");
  EXPECT_EQ(p->shape.scratch, 0u);
  EXPECT_TRUE(p->shape.commutative);
  EXPECT_FALSE(p->shape.inPlace);
  ASSERT_EQ(p->programs[0].ops.size(), 1u);
  const ir::Op &op = p->programs[0].ops[0];
  EXPECT_EQ(op.deps, ir::DepKind::None);
  EXPECT_EQ(op.count, 1u);
  EXPECT_EQ(op.srcChunk, 0u);
}

// `syntax` (not a plan) wins over `invalid` wherever each sits in the file:
// an invalid op before or after an unknown key, an invalid shape before a
// malformed op; the first invalid is reported when the file has no syntax
// error.
TEST(PlanReader, SyntaxWinsWhateverTheOrder) {
  const std::string badChunk = "    - {op: copy, buf: out, chunk: 9, count: 1, src: in}\n";
  const std::string badKey = "    - {op: copy, buf: out, chunk: 0, count: 1, src: in, x: 1}\n";
  EXPECT_EQ(errorOf(withOps(badChunk)).find("t.yaml:9:7: invalid: "), 0u)
      << errorOf(withOps(badChunk));
  for (const std::string &ops : {badChunk + badKey, badKey + badChunk}) {
    const std::string e = errorOf(withOps(ops));
    EXPECT_NE(e.find(": syntax: unknown key 'x' in copy op"), std::string::npos) << e;
  }
  // An invalid shape (ranks 0) and a malformed op after it.
  const std::string text = "format: collc-plan/1\ncollective: allreduce\nranks: 0\n"
                           "chunks: 2\nprograms:\n  0:\n    - {op: fly}\n";
  EXPECT_NE(errorOf(text).find("t.yaml:7:12: syntax: unknown op 'fly'"), std::string::npos)
      << errorOf(text);
  // A rank out of range, then a program with an unknown key.
  const std::string ranks = std::string(header) + "programs:\n  0: []\n  1: []\n  7: []\n"
                            "  2:\n" + badKey;
  EXPECT_NE(errorOf(ranks).find(": syntax: unknown key 'x'"), std::string::npos)
      << errorOf(ranks);
  // Without the syntax error, the first invalid one.
  EXPECT_EQ(errorOf(std::string(header) + "programs:\n  0: []\n  1: []\n  7: []\n"),
            "t.yaml:10:3: invalid: rank 7 out of range (ranks = 2)");
}

} // namespace
