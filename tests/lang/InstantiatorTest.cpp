// tests/lang/InstantiatorTest.cpp: every operator, builtin, statement and instantiation error.
//
// Expressions are checked through `require (e) == (v)` in a header, which
// holds exactly when e evaluates to v (and `== v + 1` must then fail). Errors
// are compared as the exact text a user sees: position, message, the values
// of r, p and the loop variables, the line and the caret.
#include "lang/Instantiator.h"
#include "lang/Parser.h"
#include "ir/PlanIO.h"

#include <gtest/gtest.h>

namespace collc::lang {
namespace {

const char *header = "algorithm t\ncollective allreduce\nchunks p\n";

Module parseOk(const std::string &text) {
  llvm::Expected<Module> m = parse(text, "t.calgo");
  if (!m) {
    ADD_FAILURE() << llvm::toString(m.takeError());
    return Module{};
  }
  return std::move(*m);
}

/// Whether `require (expr) == (value)` holds for p = `p` (or the error).
std::string holds(const std::string &expr, int64_t value, uint32_t p = 4) {
  const std::string text = std::string(header) + "param k = 3\nrequire (" + expr + ") == (" +
                           std::to_string(value) + ")\n";
  llvm::Expected<Module> m = parse(text, "t.calgo");
  if (!m)
    return llvm::toString(m.takeError());
  InstantiateOptions o;
  o.ranks = p;
  llvm::Expected<bool> ok = accepts(*m, o);
  if (!ok)
    return llvm::toString(ok.takeError());
  return *ok ? "true" : "false";
}

void expectValue(const std::string &expr, int64_t value, uint32_t p = 4) {
  EXPECT_EQ(holds(expr, value, p), "true") << expr << " = " << value;
  EXPECT_EQ(holds(expr, value + 1, p), "false") << expr << " != " << value + 1;
}

TEST(Instantiator, EvaluatesEveryOperator) {
  expectValue("7 + 5", 12);
  expectValue("7 - 9", -2);
  expectValue("7 * -3", -21);
  expectValue("7 / 2", 3);
  expectValue("-7 / 2", -4); // floor division
  expectValue("7 / -2", -4);
  expectValue("-7 / -2", 3);
  expectValue("7 % 3", 1);
  expectValue("-7 % 3", 2); // non-negative modulo
  expectValue("-1 % p", 3);
  expectValue("7 % -3", 1);
  expectValue("-7 % -3", 2);
  expectValue("2 ** 10", 1024);
  expectValue("2 ** 3 ** 2", 512); // right-associative
  expectValue("-2 ** 2", -4);      // ** binds tighter than unary minus
  expectValue("(-2) ** 3", -8);
  expectValue("k ** 0", 1);
  expectValue("6 xor 3", 5);
  expectValue("6 ^ 3", 5);
  expectValue("6 & 3", 2);
  expectValue("6 | 3", 7);
  expectValue("1 << 10", 1024);
  expectValue("-16 >> 2", -4);
  expectValue("~0", -1);
  expectValue("3 < 4", 1);
  expectValue("4 <= 4", 1);
  expectValue("3 > 4", 0);
  expectValue("3 >= 4", 0);
  expectValue("3 == 3", 1);
  expectValue("3 != 3", 0);
  expectValue("1 and 0", 0);
  expectValue("2 and 3", 1);
  expectValue("0 or 5", 1);
  expectValue("not 0", 1);
  expectValue("not 7", 0);
  expectValue("p > 2 ? 10 : 20", 10);
  expectValue("p > 8 ? 10 : p > 2 ? 30 : 40", 30);
  // Precedence: comparisons below bitwise operators, bitwise below arithmetic.
  expectValue("5 & 4 == 4", 1);
  expectValue("1 + 2 * 3", 7);
  expectValue("1 | 2 ^ 3 & 4", 3);
  expectValue("1 << 2 + 1", 8);
  // Short-circuit: the right operand is not evaluated.
  expectValue("0 and 1 / 0", 0);
  expectValue("1 or 1 / 0", 1);
  expectValue("1 ? 2 : 1 / 0", 2);
}

TEST(Instantiator, EvaluatesEveryBuiltin) {
  expectValue("log2(1)", 0);
  expectValue("log2(64)", 6);
  expectValue("log2(63)", 5);
  expectValue("clog2(1)", 0);
  expectValue("clog2(63)", 6);
  expectValue("clog2(64)", 6);
  expectValue("clog2(65)", 7);
  expectValue("pof2(1)", 1);
  expectValue("pof2(63)", 32);
  expectValue("pof2(64)", 64);
  expectValue("logk(80, 3)", 3);
  expectValue("logk(81, 3)", 4);
  expectValue("logk(1, 2)", 0);
  expectValue("pofk(80, 3)", 27);
  expectValue("pofk(81, 3)", 81);
  expectValue("pofk(9223372036854775807, 2)", int64_t(1) << 62);
  expectValue("popcount(0)", 0);
  expectValue("popcount(255)", 8);
  expectValue("ctz(1)", 0);
  expectValue("ctz(40)", 3);
  expectValue("abs(-5)", 5);
  expectValue("abs(5)", 5);
  expectValue("min(3, -1, 2)", -1);
  expectValue("max(3, -1, 2)", 3);
  expectValue("gcd(12, 18)", 6);
  expectValue("gcd(12, 18, 8)", 2);
  expectValue("gcd(0, 5)", 5);
  expectValue("gcd(0, 0)", 0);
  expectValue("lcm(4, 6)", 12);
  expectValue("lcm(2, 3, 5)", 30);
  expectValue("lcm(1, 7)", 7);
  EXPECT_NE(holds("gcd(-1, 2)", 1).find("needs arguments >= 0"), std::string::npos);
  EXPECT_NE(holds("lcm(0, 2)", 0).find("needs arguments >= 1"), std::string::npos);
  EXPECT_NE(holds("lcm(4611686018427387904, 3)", 0).find("overflows 64 bits"),
            std::string::npos);
  // Flat, a rank's line at level 0 is every rank, in rank order.
  expectValue("level_count(2, 0)", 4);
  expectValue("level_index(2, 0)", 2);
  expectValue("level_rank(1, 0, 3)", 3);
  EXPECT_NE(holds("level_rank(1, 0, 4)", 0).find("needs 0 <= i < level_count(x, j) = 4"),
            std::string::npos);
  EXPECT_NE(holds("level_count(0, 1)", 0).find("needs a level 0 <= j < nlevels"),
            std::string::npos);
  EXPECT_NE(holds("level_index(4, 0)", 0).find("needs a rank 0 <= x < p"), std::string::npos);
  expectValue("p", 1, 1);
  expectValue("k", 3);
}

TEST(Instantiator, UserFunctionsRecurseAndSeeTheHeader) {
  const std::string text = std::string(header) +
                           "param k = 2\nconst twice = 2 * p\n"
                           "fn fact(n) = n <= 1 ? 1 : n * fact(n - 1)\n"
                           "fn scaled(a, b) = a * k + b + twice\n"
                           "require fact(5) == 120 and scaled(3, 1) == 15\n";
  Module m = parseOk(text);
  InstantiateOptions o;
  o.ranks = 4;
  EXPECT_TRUE(*accepts(m, o));
  o.params = {{"k", 3}};
  EXPECT_FALSE(*accepts(m, o)); // scaled(3, 1) = 18 with k = 3
}

/// Rank `rank`'s ops of `body` (after the header) as "kind peer chunk step" lines.
std::string program(const std::string &body, uint32_t p, uint32_t rank,
                    const std::string &extraHeader = "") {
  llvm::Expected<Module> m = parse(std::string(header) + extraHeader + body, "t.calgo");
  if (!m)
    return llvm::toString(m.takeError());
  InstantiateOptions o;
  o.ranks = p;
  llvm::Expected<ir::Program> prog = instantiateRank(*m, o, rank);
  if (!prog)
    return llvm::toString(prog.takeError());
  std::string s;
  for (const ir::Op &op : prog->ops)
    s += ir::describe(op) +
         (ir::hasOrder(op.kind) ? " " + ir::orderName(op.kind, op.order).str() : "") + " @" +
         std::to_string(op.step) + "; ";
  return s;
}

TEST(Instantiator, LoopsWithStridesAndReverse) {
  EXPECT_EQ(program("for i in 0..p { send out[i] to 1 }", 4, 0),
            "send out[0] to 1 @0; send out[1] to 1 @0; send out[2] to 1 @0; send out[3] to 1 @0; ");
  EXPECT_EQ(program("for i in 0..7 by 3 { send out[i] to 1 }", 8, 0),
            "send out[0] to 1 @0; send out[3] to 1 @0; send out[6] to 1 @0; ");
  EXPECT_EQ(program("for i in reverse 0..7 by 3 { send out[i] to 1 }", 8, 0),
            "send out[6] to 1 @0; send out[3] to 1 @0; send out[0] to 1 @0; ");
  EXPECT_EQ(program("for i in reverse 1..p { send out[i] to 0 }", 4, 1),
            "send out[3] to 0 @0; send out[2] to 0 @0; send out[1] to 0 @0; ");
  EXPECT_EQ(program("for d in 1..p by *2 { send out[d] to 0 }", 8, 1),
            "send out[1] to 0 @0; send out[2] to 0 @0; send out[4] to 0 @0; ");
  EXPECT_EQ(program("for d in reverse 1..p by *3 { send out[d] to 0 }", 12, 1),
            "send out[9] to 0 @0; send out[3] to 0 @0; send out[1] to 0 @0; ");
  EXPECT_EQ(program("for i in 3..3 { send out[i] to 0 }", 4, 1), ""); // empty range
  EXPECT_EQ(program("for i in 5..3 { send out[i] to 0 }", 8, 1), "");
}

TEST(Instantiator, StatementsAndOps) {
  EXPECT_EQ(program("let x = 1\nwhile x < p { x = 2 * x\n step }\nsend out[0] to x - 1", 8, 0),
            "send out[0] to 7 @3; ");
  EXPECT_EQ(program("if r == 0 { send out[0] to 1 } else if r == 1 { recv out[0] from 0 } "
                    "else { step 5; copy in[0..2] to out[1..3] }",
                    3, 2),
            "copy out[1..2] from in[0..1] @5; ");
  EXPECT_EQ(program("step 2; recv_reduce out[1] from 0 buf_first into tmp[0]", 2, 1, "scratch 1\n"),
            "recv_reduce out[1] from 0 into tmp[0] buf_first @2; ");
  EXPECT_EQ(program("reduce out[0..2] with tmp[0..2] src_first(r == 0)", 2, 1, "scratch 2\n"),
            "reduce out[0..1] from tmp[0..1] buf_first @0; ");
  EXPECT_EQ(program("let b = r == 0 ? out : tmp\nsend b[0] to 1 - r\nrecv out[0] from 1 - r "
                    "after [nops - 1]\nsend out[1] to 1 - r after []",
                    2, 1, "scratch 1\n"),
            "send tmp[0] to 0 @0; recv out[0] from 0 @0; send out[1] to 0 @0; ");
}

TEST(Instantiator, OpsCarryEveryFieldOfFormatV1) {
  Module m = parseOk(std::string(header) +
                     "scratch 2\n"
                     "copy in[0..2] to tmp[0..2]\n"
                     "step\n"
                     "reduce out[1] with tmp[0] buf_first into tmp[1] after [0]\n"
                     "recv_reduce out[0] from (r + 1) % p\n");
  InstantiateOptions o;
  o.ranks = 2;
  llvm::Expected<ir::Plan> plan = instantiate(m, o);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  const ir::Op &reduce = plan->programs[1].ops[1];
  EXPECT_EQ(reduce.kind, ir::OpKind::Reduce);
  EXPECT_EQ(reduce.order, ir::Order::BufFirst);
  EXPECT_TRUE(reduce.hasDst);
  EXPECT_EQ(reduce.dst, ir::Buffer::Tmp);
  EXPECT_EQ(reduce.dstChunk, 1u);
  EXPECT_EQ(reduce.src, ir::Buffer::Tmp);
  EXPECT_EQ(reduce.srcChunk, 0u);
  EXPECT_EQ(reduce.deps, ir::DepKind::After);
  EXPECT_EQ(reduce.after, (llvm::SmallVector<uint32_t, 2>{0}));
  EXPECT_EQ(reduce.loc.line, 7u);
  const ir::Op &recv = plan->programs[1].ops[2];
  EXPECT_EQ(recv.peer, 0u);
  EXPECT_EQ(recv.order, ir::Order::OtherFirst);
  EXPECT_EQ(recv.deps, ir::DepKind::Step);
  EXPECT_EQ(recv.step, 1u);
  EXPECT_EQ(plan->shape.scratch, 2u);
  EXPECT_EQ(plan->shape.chunks, 2u);
  EXPECT_EQ(plan->source, "t.calgo");
}

/// The error instantiating `body` after the header for p (whole plan).
std::string error(const std::string &body, uint32_t p = 4,
                  ParamValues params = {},
                  const std::string &head = header) {
  llvm::Expected<Module> m = parse(head + body, "t.calgo");
  if (!m)
    return llvm::toString(m.takeError());
  InstantiateOptions o;
  o.ranks = p;
  o.params = std::move(params);
  o.fuel = 100000;
  llvm::Expected<ir::Plan> plan = instantiate(*m, o);
  return plan ? "no error" : llvm::toString(plan.takeError());
}

TEST(Instantiator, RefusesWithPositionAndValues) {
  EXPECT_EQ(error("require p % 2 == 0\n", 7),
            "t.calgo:4:9: error: require p % 2 == 0 does not hold (p = 7)\n"
            "  require p % 2 == 0\n"
            "          ^");
  EXPECT_EQ(error("for s in 0..p {\n  send out[0] to r + 1\n}\n"),
            "t.calgo:5:18: error: send: peer 4 is out of range 0..3 (r = 3, p = 4, s = 0)\n"
            "    send out[0] to r + 1\n"
            "                   ^");
  EXPECT_EQ(error("send out[0] to r\n"),
            "t.calgo:4:16: error: send: peer 0 is the rank itself (r = 0, p = 4)\n"
            "  send out[0] to r\n"
            "                 ^");
  EXPECT_EQ(error("step p / (r - r)\n"),
            "t.calgo:4:8: error: division by zero (4 / 0) (r = 0, p = 4)\n"
            "  step p / (r - r)\n"
            "         ^");
  EXPECT_EQ(error("step r % 0\n"),
            "t.calgo:4:8: error: modulo by zero (0 % 0) (r = 0, p = 4)\n"
            "  step r % 0\n"
            "         ^");
  EXPECT_EQ(error("step 2 ** 63\n"),
            "t.calgo:4:8: error: 2 ** 63 overflows 64 bits (r = 0, p = 4)\n"
            "  step 2 ** 63\n"
            "         ^");
  EXPECT_EQ(error("step 2 ** -1\n"),
            "t.calgo:4:8: error: negative exponent (2 ** -1) (r = 0, p = 4)\n"
            "  step 2 ** -1\n"
            "         ^");
  EXPECT_EQ(error("step 1 << 64\n"),
            "t.calgo:4:8: error: shift by 64 (1 << 64; shifts are 0..63) (r = 0, p = 4)\n"
            "  step 1 << 64\n"
            "         ^");
  EXPECT_EQ(error("step 9223372036854775807 + p\n", 2),
            "t.calgo:4:26: error: 9223372036854775807 + 2 overflows 64 bits (r = 0, p = 2)\n"
            "  step 9223372036854775807 + p\n"
            "                           ^");
  EXPECT_EQ(error("step log2(r)\n"),
            "t.calgo:4:6: error: log2(0): needs x >= 1 (r = 0, p = 4)\n"
            "  step log2(r)\n"
            "       ^");
  EXPECT_EQ(error("step -1\n"),
            "t.calgo:4:1: error: step -1 is out of range (0..4294967295) (r = 0, p = 4)\n"
            "  step -1\n"
            "  ^");
  EXPECT_EQ(error("step 3\nsend out[0] to 1 - r\nstep 2\nrecv out[0] from 1 - r\n", 2),
            "t.calgo:7:1: error: recv: step 2 is lower than step 3 of this rank's previous op "
            "(steps never go back) (r = 0, p = 2)\n"
            "  recv out[0] from 1 - r\n"
            "  ^");
  EXPECT_EQ(error("send out[2..2] to 1 - r\n", 2),
            "t.calgo:4:6: error: send: slot range out[2..2] is empty (r = 0, p = 2)\n"
            "  send out[2..2] to 1 - r\n"
            "       ^");
  EXPECT_EQ(error("send out[r - 1] to 1 - r\n", 2),
            "t.calgo:4:6: error: send: slot out[-1] is negative (r = 0, p = 2)\n"
            "  send out[r - 1] to 1 - r\n"
            "       ^");
  EXPECT_EQ(error("send out[p] to 1 - r\n", 2),
            "t.calgo:4:1: error: send: slot out[2] out of range (out has 2 slots) (r = 0, p = 2)\n"
            "  send out[p] to 1 - r\n"
            "  ^");
  EXPECT_EQ(error("send tmp[0] to 1 - r\n", 2),
            "t.calgo:4:1: error: send: slot tmp[0] out of range (tmp has 0 slots) (r = 0, p = 2)\n"
            "  send tmp[0] to 1 - r\n"
            "  ^");
  EXPECT_EQ(error("copy in[0..2] to out[0]\n", 2),
            "t.calgo:4:6: error: copy: source in[0..2] has 2 slots, out[0] has 1 (r = 0, p = 2)\n"
            "  copy in[0..2] to out[0]\n"
            "       ^");
  EXPECT_EQ(error("send out[0] to 1 - r after [0]\n", 2),
            "t.calgo:4:29: error: send: 'after' names op 0, not one of this rank's 0 earlier "
            "ops (r = 0, p = 2)\n"
            "  send out[0] to 1 - r after [0]\n"
            "                              ^");
  EXPECT_EQ(error("let b = 7\nsend b[0] to 1 - r\n", 2),
            "t.calgo:5:6: error: send: 7 is not a buffer (in, out or tmp) (r = 0, p = 2)\n"
            "  send b[0] to 1 - r\n"
            "       ^");
  EXPECT_EQ(error("while 1 {\n}\n", 2),
            "t.calgo:4:1: error: evaluation budget of 100128 steps used up (an endless loop?) "
            "(r = 0, p = 2)\n"
            "  while 1 {\n"
            "  ^");
  EXPECT_EQ(error("step f(1)\n", 2, {}, std::string(header) + "fn f(n) = f(n + 1)\n"),
            "t.calgo:4:11: error: calls nested more than 256 deep (endless recursion?) (r = 0, p = 2)\n"
            "  fn f(n) = f(n + 1)\n"
            "            ^");
  EXPECT_EQ(error("", 2, {}, "algorithm t\ncollective allreduce\nchunks r\n"),
            "t.calgo:3:8: error: 'r' has no value in the header (it is the same for every rank) "
            "(p = 2)\n"
            "  chunks r\n"
            "         ^");
  EXPECT_EQ(error("", 2, {}, "algorithm t\ncollective allreduce\nchunks p - 2\n"),
            "t.calgo:3:8: error: chunks = 0 is out of range (1..16777216) (p = 2)\n"
            "  chunks p - 2\n"
            "         ^");
  EXPECT_EQ(error("", 2, {{"k", 1}}),
            "t.calgo:1:1: error: 't' has no parameter 'k' (it has none) (p = 2)\n"
            "  algorithm t\n"
            "  ^");
}

TEST(Instantiator, RefusesLoopsOpsAndShapesThatCannotBe) {
  EXPECT_EQ(error("for i in 0..p by 0 {\n}\n"),
            "t.calgo:4:18: error: a range's stride must be 1 or more, not 0 (r = 0, p = 4)\n"
            "  for i in 0..p by 0 {\n"
            "                   ^");
  EXPECT_EQ(error("for i in 1..p by *1 {\n}\n"),
            "t.calgo:4:19: error: a range's stride must be *2 or more, not 1 (r = 0, p = 4)\n"
            "  for i in 1..p by *1 {\n"
            "                    ^");
  EXPECT_EQ(error("for i in 0..p by *2 {\n}\n"),
            "t.calgo:4:10: error: a range with a stride '*2' must start at 1 or more, not 0 "
            "(r = 0, p = 4)\n"
            "  for i in 0..p by *2 {\n"
            "           ^");
  EXPECT_EQ(error("step -(-9223372036854775807 - 1)\n"),
            "t.calgo:4:6: error: -(-2^63) overflows 64 bits (r = 0, p = 4)\n"
            "  step -(-9223372036854775807 - 1)\n"
            "       ^");
  EXPECT_EQ(error("step nops\n", 2, {}, "algorithm t\ncollective allreduce\nchunks nops + 1\n"),
            "t.calgo:3:8: error: 'nops' has no value in the header (p = 2)\n"
            "  chunks nops + 1\n"
            "         ^");
  EXPECT_EQ(error("recv_reduce out[0] from 1 - r into tmp[0..2]\n", 2, {},
                  std::string(header) + "scratch 2\n"),
            "t.calgo:5:36: error: recv_reduce: destination tmp[0..2] has 2 slots, out[0] has 1 "
            "(r = 0, p = 2)\n"
            "  recv_reduce out[0] from 1 - r into tmp[0..2]\n"
            "                                     ^");
  EXPECT_EQ(error("copy in[0] to out[0]\n", 2, {},
                  "algorithm t\ncollective reduce\nchunks 1\n"),
            "t.calgo:4:1: error: copy: rank 1 has no out buffer (in reduce only the root has one) "
            "(r = 1, p = 2, root = 0)\n"
            "  copy in[0] to out[0]\n"
            "  ^");
  EXPECT_EQ(error("recv_reduce out[0] from 1 - r\n", 2, {},
                  "algorithm t\ncollective allgather\nchunks p\n"),
            "t.calgo:4:1: error: recv_reduce: recv_reduce is not allowed in an allgather plan (it "
            "does not reduce) (r = 0, p = 2)\n"
            "  recv_reduce out[0] from 1 - r\n"
            "  ^");
  llvm::Expected<Module> m = parse(std::string(header) + "for s in 0..p {\n  send out[0] to 1 - r\n}\n",
                                   "t.calgo");
  ASSERT_TRUE(bool(m));
  InstantiateOptions o;
  o.ranks = 2;
  o.maxOps = 3;
  llvm::Expected<ir::Plan> plan = instantiate(*m, o);
  ASSERT_FALSE(bool(plan));
  bool limited = false;
  llvm::handleAllErrors(plan.takeError(), [&](const OpLimitError &e) {
    limited = true;
    EXPECT_EQ(e.limit, 3u);
    EXPECT_EQ(e.message, "t.calgo:5:3: error: more than 3 ops (r = 1, p = 2, s = 1)\n"
                         "    send out[0] to 1 - r\n"
                         "    ^");
  });
  EXPECT_TRUE(limited);
  o.maxOps = 4;
  EXPECT_TRUE(bool(instantiate(*m, o)));
}

TEST(Instantiator, EdgeValuesOfTheShape) {
  // p = 1: the loops over the other ranks are empty; r = p - 1 wraps with %.
  EXPECT_EQ(program("for s in 1..p { send out[s] to (r + s) % p }", 1, 0), "");
  EXPECT_EQ(program("send out[0] to (r + 1) % p", 5, 4), "send out[0] to 0 @0; ");
  EXPECT_EQ(program("recv out[0] from (r - 1) % p", 5, 0), "recv out[0] from 4 @0; ");
  Module m = parseOk(std::string(header) + "step\n");
  InstantiateOptions o;
  o.ranks = 3;
  EXPECT_EQ(llvm::toString(instantiateRank(m, o, 3).takeError()),
            "t.calgo:1:1: error: rank 3 is out of range (p = 3)\n  algorithm t\n  ^");
  o.ranks = 0;
  EXPECT_EQ(llvm::toString(instantiate(m, o).takeError()),
            "t.calgo:1:1: error: p = 0 is out of range (1..1048576) (p = 0)\n  algorithm t\n  ^");
}

TEST(Instantiator, ExplainGivesTheLoopVariablesOfAnOp) {
  Module m = parseOk(std::string(header) +
                     "copy in[0] to out[0]\n"
                     "for s in 0..2 {\n  for i in 0..2 {\n    send out[i] to 1 - r\n  }\n}\n");
  InstantiateOptions o;
  o.ranks = 2;
  EXPECT_EQ(explain(m, o, 1, 0), std::optional<std::string>(""));
  EXPECT_EQ(explain(m, o, 1, 3), std::optional<std::string>("s = 1, i = 0"));
  EXPECT_EQ(explain(m, o, 1, 5), std::nullopt); // rank 1 has five ops
}

TEST(Instantiator, LayoutAnswersTheTopologyFunctions) {
  // 2 nodes x 3 slots; 5 ranks placed out of order, node 1 not full.
  // coords: (local, node) per rank, innermost first.
  llvm::Expected<std::shared_ptr<const Layout>> l =
      makeLayout({3, 2}, {2, 1, /**/ 0, 0, /**/ 1, 0, /**/ 0, 1, /**/ 2, 0}, 5);
  ASSERT_TRUE(bool(l)) << llvm::toString(l.takeError());
  Module m = parseOk(std::string(header) +
                     "require nnodes == 2 and ppn == 3 and nlevels == 2 and level_size(1) == 2\n"
                     "require node(0) == 1 and local(0) == 1 and node(1) == 0 and local(1) == 0\n"
                     "require rank_at(0, 0) == 1 and rank_at(0, 1) == 2 and rank_at(0, 2) == 4\n"
                     "require rank_at(1, 0) == 3 and rank_at(1, 1) == 0 and coord(0, 0) == 2\n"
                     // Lines: level 0 a node's ranks by local coordinate, level 1 the
                     // ranks of one local coordinate by node (local 1 has node 0 only).
                     "require level_count(0, 0) == 2 and level_index(0, 0) == 1\n"
                     "require level_rank(0, 0, 0) == 3 and level_rank(4, 0, 2) == 4\n"
                     "require level_count(1, 1) == 2 and level_index(3, 1) == 1\n"
                     "require level_rank(1, 1, 1) == 3 and level_count(2, 1) == 1\n"
                     "require level_rank(4, 1, 1) == 0 and level_index(4, 1) == 0\n");
  InstantiateOptions o;
  o.ranks = 5;
  o.layout = *l;
  llvm::Expected<bool> ok = accepts(m, o);
  ASSERT_TRUE(bool(ok)) << llvm::toString(ok.takeError());
  EXPECT_TRUE(*ok);
  // A layout for another p is refused.
  o.ranks = 4;
  EXPECT_NE(llvm::toString(accepts(m, o).takeError()).find("the layout places 5 ranks, not p = 4"),
            std::string::npos);
}

TEST(Instantiator, MalformedLayoutsAreRefused) {
  EXPECT_EQ(llvm::toString(makeLayout({2, 2}, {0, 0, 0, 0}, 2).takeError()),
            "layout: ranks 0 and 1 share a slot");
  EXPECT_EQ(llvm::toString(makeLayout({2, 2}, {2, 0}, 1).takeError()),
            "layout: rank 0's coordinate 2 at level 0 is out of range 0..1");
  EXPECT_EQ(llvm::toString(makeLayout({2}, {0}, 2).takeError()),
            "layout: one coordinate per level and rank expected");
}

} // namespace
} // namespace collc::lang
