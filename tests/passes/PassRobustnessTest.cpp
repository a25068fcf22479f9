// tests/passes/PassRobustnessTest.cpp: passes on plans nobody wrote on purpose.
//
// Generated plans are mutated at random (an op dropped, a dependency list
// cleared, a peer, chunk or operand order changed), keeping only well-formed
// mutants. On every mutant each pass, and -O2 with pipelining, must run
// without crashing and leave a well-formed plan. On every mutant the
// verifier still proves, -O2 must succeed: the passes' own safety checks,
// not the verification after them, must keep a proven plan proven. The
// verifier's golden inputs (tests/lit/verifier), which are well-formed but
// wrong, must not crash a pass either.
#include "PassTestSupport.h"

#include "compiler/passes/Pipeline.h"
#include "schedules/Generators.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <random>

namespace collc::test {
namespace {

bool wellFormed(const ir::Plan &plan) {
  if (ir::checkShape(plan.shape) || plan.programs.size() != plan.shape.ranks)
    return false;
  for (uint32_t r = 0; r < plan.shape.ranks; ++r)
    for (uint32_t i = 0; i < plan.programs[r].ops.size(); ++i)
      if (ir::checkOp(plan.shape, r, plan.programs[r].ops, i))
        return false;
  return true;
}

/// One random change; the result may be malformed (the caller checks).
void mutate(ir::Plan &plan, std::mt19937 &rng) {
  const uint32_t p = plan.shape.ranks;
  auto &ops = plan.programs[rng() % p].ops;
  if (ops.empty())
    return;
  const uint32_t i = rng() % ops.size();
  ir::Op &op = ops[i];
  switch (rng() % 5) {
  case 0: // drop op i; dependencies on it go
    ops.erase(ops.begin() + i);
    for (ir::Op &o : ops) {
      if (o.deps != ir::DepKind::After)
        continue;
      llvm::SmallVector<uint32_t, 2> kept;
      for (uint32_t d : o.after)
        if (d != i)
          kept.push_back(d > i ? d - 1 : d);
      o.after = kept;
      if (o.after.empty())
        o.deps = ir::DepKind::None;
    }
    return;
  case 1: // wait for nothing
    op.deps = ir::DepKind::None;
    op.after.clear();
    op.step = 0;
    return;
  case 2:
    if (ir::isMessage(op.kind))
      op.peer = rng() % (p + 1); // may be out of range or the rank itself
    return;
  case 3:
    op.chunk = rng() % plan.shape.chunks;
    return;
  case 4:
    op.order = op.order == ir::Order::BufFirst ? ir::Order::OtherFirst : ir::Order::BufFirst;
    return;
  }
}

void runEverything(const ir::Plan &plan, const std::string &what) {
  for (const compiler::PassInfo &info : compiler::passInfos()) {
    ir::Plan copy = plan;
    compiler::PipelineOptions o;
    o.pipelineSegments = 2;
    compiler::createPass(info.name, o)->run(copy);
    EXPECT_TRUE(wellFormed(copy)) << info.name.str() << " on " << what;
  }
  compiler::PipelineOptions o;
  o.verifyEach = false;
  o.pipelineSegments = 2;
  llvm::Expected<ir::Plan> opt = compiler::optimize(plan, o);
  ASSERT_TRUE(bool(opt)) << llvm::toString(opt.takeError());
  EXPECT_TRUE(wellFormed(*opt)) << "-O2 on " << what;
}

TEST(PassRobustness, MutatedGeneratorPlans) {
  std::mt19937 rng(20261201);
  unsigned proven = 0, mutants = 0;
  for (const sched::Algorithm &a : sched::algorithms())
    for (uint32_t p = 2; p <= 9; ++p)
      for (int trial = 0; trial < 12; ++trial) {
        sched::GenOptions g;
        g.ranks = p;
        g.root = ir::hasRoot(a.collective) ? rng() % p : 0;
        if (!a.accepts(g))
          continue; // the file's `require` refuses this p
        ir::Plan plan = a.build(g);
        // Start from relaxed plans half the time: their `after` lists are
        // what the mutations of dependencies act on.
        if (trial % 2)
          compiler::createDependencyRelaxation()->run(plan);
        const int changes = 1 + int(rng() % 2);
        for (int c = 0; c < changes; ++c)
          mutate(plan, rng);
        if (!wellFormed(plan))
          continue;
        ++mutants;
        const std::string what =
            (a.name + " p=" + std::to_string(p) + " trial " + std::to_string(trial)).str();
        runEverything(plan, what);
        if (!compiler::verify(plan).proven())
          continue;
        ++proven;
        compiler::PipelineOptions o;
        llvm::Expected<ir::Plan> opt = compiler::optimize(plan, o);
        EXPECT_TRUE(bool(opt)) << what << ": " << (opt ? "" : llvm::toString(opt.takeError()))
                               << "\n"
                               << ir::printPlan(plan);
      }
  EXPECT_GT(mutants, 100u);
  EXPECT_GT(proven, 10u);
}

TEST(PassRobustness, VerifierGoldenInputs) {
  std::error_code ec;
  const std::string dir = std::string(COLLC_SOURCE_DIR) + "/tests/lit/verifier";
  unsigned files = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec)) {
    if (llvm::sys::path::extension(it->path()) != ".yaml")
      continue;
    auto buf = llvm::MemoryBuffer::getFile(it->path());
    ASSERT_TRUE(bool(buf)) << it->path();
    llvm::Expected<ir::Plan> plan = ir::parsePlan((*buf)->getBuffer(), it->path());
    if (!plan) {
      llvm::consumeError(plan.takeError());
      continue;
    }
    ++files;
    runEverything(*plan, it->path());
  }
  EXPECT_GT(files, 10u);
}

} // namespace
} // namespace collc::test
