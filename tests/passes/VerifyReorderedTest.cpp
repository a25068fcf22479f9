// tests/passes/VerifyReorderedTest.cpp: proving a plan whose dependencies
// alone were replaced from the proof of the plan before (verifyReordered)
// gives exactly what a full verification gives — through its shortcut for
// relax-deps' results, and through the full run for replacements it cannot
// vouch for (waits dropped, waits between ops that do not conflict).
#include "compiler/Verifier.h"
#include "tests/support/VerifyText.h"
#include "compiler/passes/Analysis.h"
#include "compiler/passes/Pass.h"
#include "schedules/Generators.h"

#include <gtest/gtest.h>

using namespace collc;

namespace {

using test::describe;

/// Every library plan at a few rank counts, with its proof.
template <class F> void forEachLibraryPlan(F &&f) {
  for (const sched::Algorithm &a : sched::algorithms())
    for (uint32_t p : {1u, 2u, 3u, 4u, 7u, 8u}) {
      sched::GenOptions g;
      g.ranks = p;
      g.root = ir::hasRoot(a.collective) ? p / 2 : 0;
      llvm::Expected<ir::Plan> plan = sched::generate(a.collective, a.name, g);
      if (!plan) { // refused at this p
        llvm::consumeError(plan.takeError());
        continue;
      }
      f(a, *plan);
    }
}

TEST(VerifyReordered, RelaxedPlansAreProvenAsAFullVerificationProvesThem) {
  size_t plans = 0, changed = 0, shortcuts = 0;
  forEachLibraryPlan([&](const sched::Algorithm &a, ir::Plan &plan) {
    // Not barriers: their waits are the order they prove, which relax-deps
    // (a data pass, never run on them) drops; see BarriersTakeTheFullRun.
    if (a.collective == ir::Collective::Barrier)
      return;
    for (bool identical : {false, true}) {
      compiler::VerifyOptions o;
      o.requireIdentical = identical;
      const compiler::VerifyResult before = compiler::verify(plan, o);
      if (!before.proven())
        continue;
      ir::Plan relaxed = plan;
      std::unique_ptr<compiler::Pass> pass = compiler::createDependencyRelaxation();
      ASSERT_TRUE(pass->replacesDependenciesOnly());
      const bool any = pass->run(relaxed);
      ++plans;
      changed += any;
      const compiler::VerifyResult full = compiler::verify(relaxed, o);
      ASSERT_TRUE(full.proven()) << a.name.str() << " p=" << plan.shape.ranks;
      const compiler::VerifyResult r = compiler::verifyReordered(relaxed, o, before);
      shortcuts += r.reordered;
      ASSERT_EQ(describe(r), describe(full))
          << ir::name(a.collective).str() << " " << a.name.str() << " p=" << plan.shape.ranks;
    }
  });
  EXPECT_GT(changed, plans / 2);
  // relax-deps joins only conflicting ops: the shortcut proves them all.
  EXPECT_EQ(shortcuts, plans);
}

TEST(VerifyReordered, DroppedWaitsAreFoundAsTheFullRunFindsThem) {
  size_t racy = 0;
  forEachLibraryPlan([&](const sched::Algorithm &a, ir::Plan &plan) {
    const compiler::VerifyResult before = compiler::verify(plan);
    if (!before.proven() || plan.shape.ranks < 2)
      return;
    // No waits at all: the ops are the same, the order is (vacuously)
    // contained in the old one, but most plans now race.
    ir::Plan loose = plan;
    for (ir::Program &prog : loose.programs)
      for (ir::Op &op : prog.ops) {
        op.deps = ir::DepKind::None;
        op.after.clear();
        op.step = 0;
      }
    const compiler::VerifyResult full = compiler::verify(loose);
    racy += !full.proven();
    const compiler::VerifyResult r = compiler::verifyReordered(loose, {}, before);
    // Only a race-free result takes the shortcut; never a barrier's.
    EXPECT_EQ(r.reordered, full.proven() && a.collective != ir::Collective::Barrier);
    ASSERT_EQ(describe(r), describe(full))
        << ir::name(a.collective).str() << " " << a.name.str() << " p=" << plan.shape.ranks;
  });
  EXPECT_GT(racy, 10u);
}

TEST(VerifyReordered, BarriersTakeTheFullRun) {
  // relax-deps drops a dissemination barrier's waits between rounds (they
  // join ops that touch no common slot); the shortcut must not vouch for
  // that, and the full run refuses it.
  sched::GenOptions g;
  g.ranks = 8;
  llvm::Expected<ir::Plan> gen = sched::generate(ir::Collective::Barrier, "dissemination", g);
  ASSERT_TRUE(bool(gen));
  const compiler::VerifyResult before = compiler::verify(*gen);
  ASSERT_TRUE(before.proven());
  ir::Plan relaxed = *gen;
  ASSERT_TRUE(compiler::createDependencyRelaxation()->run(relaxed));
  const compiler::VerifyResult r = compiler::verifyReordered(relaxed, {}, before);
  EXPECT_FALSE(r.reordered);
  EXPECT_FALSE(r.proven());
  EXPECT_EQ(describe(r), describe(compiler::verify(relaxed)));
  EXPECT_NE(describe(r).find("unsynchronized"), std::string::npos) << describe(r);
}

TEST(VerifyReordered, AWaitBetweenOpsThatDoNotConflictTakesTheFullRun) {
  // Ring at 4 ranks, relaxed; then rank 0's last op also waits for its
  // first send, which touches another slot: no conflict, so the shortcut
  // cannot vouch for that order, and the full run decides (here: proven,
  // with a longer critical path possible).
  sched::GenOptions g;
  g.ranks = 4;
  llvm::Expected<ir::Plan> gen = sched::generate(ir::Collective::Allreduce, "ring", g);
  ASSERT_TRUE(bool(gen));
  ir::Plan plan = std::move(*gen);
  compiler::createDependencyRelaxation()->run(plan);
  const compiler::VerifyResult relaxedProof = compiler::verify(plan);
  ASSERT_TRUE(relaxedProof.proven());
  ir::Plan more = plan;
  auto &ops = more.programs[0].ops;
  uint32_t firstSend = 0;
  while (ops[firstSend].kind != ir::OpKind::Send)
    ++firstSend;
  ir::Op &last = ops.back();
  ASSERT_FALSE(llvm::is_contained(last.after, firstSend));
  last.deps = ir::DepKind::After;
  last.after.push_back(firstSend);
  std::sort(last.after.begin(), last.after.end());
  const compiler::VerifyResult full = compiler::verify(more);
  const compiler::VerifyResult r = compiler::verifyReordered(more, {}, relaxedProof);
  EXPECT_FALSE(r.reordered);
  EXPECT_EQ(describe(r), describe(full));
}

} // namespace
