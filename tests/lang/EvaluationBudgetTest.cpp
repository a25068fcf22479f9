// tests/lang/EvaluationBudgetTest.cpp: an endless loop is an error, and the budget that stops
// it refuses no library algorithm.
//
// The budget (InstantiateOptions::fuel, docs/language.md "Errors") is the header's and each
// rank's run's own: fuel + fuelPerRank * p steps, plus fuelPerOp for every op the rank has
// emitted. Steps: each statement, loop iteration and call.
#include "lang/Instantiator.h"
#include "lang/Parser.h"
#include "schedules/Generators.h"

#include <gtest/gtest.h>

namespace collc::lang {
namespace {

const char *header = "algorithm t\ncollective allreduce\nchunks 1\n";

/// Instantiates `body` after the header for p ranks with a small budget:
/// "ok", or the error.
std::string run(const std::string &body, uint32_t p, uint64_t fuel, uint64_t perRank,
                uint64_t perOp, uint64_t maxOps = 1000000) {
  llvm::Expected<Module> m = parse(header + body, "t.calgo");
  if (!m)
    return llvm::toString(m.takeError());
  InstantiateOptions o;
  o.ranks = p;
  o.fuel = fuel;
  o.fuelPerRank = perRank;
  o.fuelPerOp = perOp;
  o.maxOps = maxOps;
  llvm::Expected<ir::Plan> plan = instantiate(*m, o);
  return plan ? "ok" : llvm::toString(plan.takeError());
}

TEST(EvaluationBudget, EndlessLoopIsAnErrorAtItsLine) {
  EXPECT_EQ(run("while 1 {\n}\n", 2, 1000, 0, 0),
            "t.calgo:4:1: error: evaluation budget of 1000 steps used up (an endless loop?) "
            "(r = 0, p = 2)\n"
            "  while 1 {\n"
            "  ^");
  // The header has a budget too.
  llvm::Expected<Module> m =
      parse("algorithm t\ncollective allreduce\nfn f(n) = n < 1 ? 0 : f(n - 1) + f(n - 1)\n"
            "const c = f(100)\nchunks 1\n",
            "t.calgo");
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  InstantiateOptions o;
  o.ranks = 2;
  o.fuel = 1000;
  llvm::Expected<bool> ok = accepts(*m, o);
  ASSERT_FALSE(bool(ok));
  EXPECT_EQ(llvm::toString(ok.takeError()),
            "t.calgo:3:34: error: evaluation budget of 1128 steps used up (an endless "
            "loop?) (p = 2)\n"
            "  fn f(n) = n < 1 ? 0 : f(n - 1) + f(n - 1)\n"
            "                                   ^");
}

TEST(EvaluationBudget, EveryRankHasABudgetOfItsOwn) {
  // 601 steps per rank (the loop, 300 iterations, 300 lets): 2404 in all.
  EXPECT_EQ(run("for i in 0..300 {\n  let x = i\n}\ncopy in[0] to out[0]\n", 4, 1000, 0, 0),
            "ok");
  // Rank 3 alone takes 1201.
  EXPECT_EQ(run("for i in 0..(r == 3 ? 600 : 1) {\n  let x = i\n}\n", 4, 1000, 0, 0),
            "t.calgo:5:3: error: evaluation budget of 1000 steps used up (an endless loop?) "
            "(r = 3, p = 4, i = 499)\n"
            "    let x = i\n"
            "    ^");
}

TEST(EvaluationBudget, GrowsWithRanksAndOps) {
  // 1501 steps: more than 1000 + 10 per rank at p = 2, less at p = 64.
  const std::string loop = "for i in 0..1500 {\n}\ncopy in[0] to out[0]\n";
  EXPECT_EQ(run(loop, 2, 1000, 10, 0),
            "t.calgo:4:1: error: evaluation budget of 1020 steps used up (an endless loop?) "
            "(r = 0, p = 2, i = 1019)\n"
            "  for i in 0..1500 {\n"
            "  ^");
  EXPECT_EQ(run(loop, 64, 1000, 10, 0), "ok");
  // Every op emitted adds fuelPerOp: a loop that emits one op per 2 steps runs
  // past the budget while it earns 1 step per op...
  const std::string emitting = "while 1 {\n  send in[0] to 1 - r\n}\n";
  EXPECT_EQ(run(emitting, 2, 1000, 0, 1),
            "t.calgo:5:3: error: evaluation budget of 1998 steps used up (an endless loop?) "
            "(r = 0, p = 2)\n"
            "    send in[0] to 1 - r\n"
            "    ^");
  // ... and to the op limit while it earns 4.
  EXPECT_EQ(run(emitting, 2, 1000, 0, 4, 5000),
            "t.calgo:5:3: error: more than 5000 ops (r = 0, p = 2)\n"
            "    send in[0] to 1 - r\n"
            "    ^");
}

TEST(EvaluationBudget, LibraryFitsAQuarterOfTheDefaults) {
  // Every library algorithm, flat (the composed ones then evaluate groups of
  // p ranks in every rank's run: their most steps per rank), with a quarter of
  // the default allowances per rank and per op and almost no base: the
  // defaults leave every algorithm four times the room it takes.
  InstantiateOptions defaults;
  for (const sched::Algorithm &a : sched::algorithms())
    for (uint32_t p : {1u, 2u, 3u, 7u, 8u, 64u, 100u, 256u}) {
      InstantiateOptions o;
      o.ranks = p;
      o.root = ir::hasRoot(a.collective) ? p / 2 : 0;
      o.resolver = &sched::libraryResolver();
      o.fuel = 1000;
      o.fuelPerRank = defaults.fuelPerRank / 4;
      o.fuelPerOp = defaults.fuelPerOp / 4;
      o.maxOps = uint64_t(1) << 30;
      llvm::Expected<bool> ok = accepts(*a.module, o);
      ASSERT_TRUE(bool(ok)) << llvm::toString(ok.takeError());
      if (!*ok)
        continue;
      llvm::Expected<ir::Plan> plan = instantiate(*a.module, o);
      EXPECT_TRUE(bool(plan)) << ir::name(a.collective).str() << " " << a.name.str()
                              << " p = " << p << ": "
                              << (plan ? "" : llvm::toString(plan.takeError()));
    }
}

} // namespace
} // namespace collc::lang
