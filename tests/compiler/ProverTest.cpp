// tests/compiler/ProverTest.cpp: a Prover's runs after the first (which reuse
// its structure check, graphs and matching) give exactly what verify() gives,
// whatever claims change in between and whatever the options.
#include "compiler/Verifier.h"
#include "tests/support/VerifyText.h"
#include "schedules/Generators.h"

#include <gtest/gtest.h>

using namespace collc;

namespace {

using test::describe;

TEST(Prover, LaterRunsEqualFreshVerificationsAsClaimsChange) {
  // Claim sequences: each flips commutative and in_place as proveStrongest
  // does, and back; options vary with them.
  const std::pair<bool, bool> claims[] = {{true, false}, {false, false}, {false, true},
                                          {true, true},  {true, false},  {false, true}};
  size_t runs = 0, reused = 0;
  for (const sched::Algorithm &a : sched::algorithms())
    for (uint32_t p : {1u, 2u, 3u, 5u, 8u}) {
      sched::GenOptions g;
      g.ranks = p;
      g.root = ir::hasRoot(a.collective) ? p - 1 : 0;
      llvm::Expected<ir::Plan> gen = sched::generate(a.collective, a.name, g);
      if (!gen) { // the algorithm refuses this p (e.g. powers of two only)
        llvm::consumeError(gen.takeError());
        continue;
      }
      for (bool racy : {false, true}) {
      ir::Plan plan = *gen;
      if (racy) // no waits at all: races (and what they poison) in most plans
        for (ir::Program &prog : plan.programs)
          for (ir::Op &op : prog.ops) {
            op.deps = ir::DepKind::None;
            op.after.clear();
            op.step = 0;
          }
      compiler::Prover prover(plan);
      unsigned k = 0;
      for (auto [commutative, inPlace] : claims) {
        plan.shape.commutative = commutative;
        plan.shape.inPlace = inPlace && a.collective != ir::Collective::Bcast &&
                             a.collective != ir::Collective::ReduceScatterBlock;
        compiler::VerifyOptions o;
        o.stopAtFirstError = k % 3 == 1;
        o.requireIdentical = k % 2 == 1;
        o.maxErrors = k % 4 == 3 ? 2 : 20;
        ++k;
        const compiler::VerifyResult fresh = compiler::verify(plan, o);
        const compiler::VerifyResult shared = prover.verify(o);
        ++runs;
        reused += k > 1;
        // A stopped run keeps some diagnostics, not necessarily the same
        // ones as another stopped run: compare its verdict only.
        if (o.stopAtFirstError) {
          ASSERT_EQ(fresh.proven(), shared.proven())
              << a.name.str() << " p=" << p << " claims " << commutative << inPlace;
          continue;
        }
        ASSERT_EQ(describe(fresh), describe(shared))
            << ir::name(a.collective).str() << " " << a.name.str() << " p=" << p << " claims "
            << commutative << inPlace << (racy ? " racy" : "");
      }
      }
    }
  EXPECT_GT(reused, runs / 2);
}

TEST(Prover, AChangedShapeIsPreparedAgain) {
  sched::GenOptions g;
  g.ranks = 4;
  llvm::Expected<ir::Plan> gen = sched::generate(ir::Collective::Allreduce, "ring", g);
  ASSERT_TRUE(bool(gen));
  ir::Plan plan = std::move(*gen);
  compiler::Prover prover(plan);
  ASSERT_TRUE(prover.verify().proven());
  // More scratch is a different shape: the structure is checked again (and
  // the plan still proves), never taken from the first run.
  plan.shape.scratch += 3;
  const compiler::VerifyResult r = prover.verify();
  EXPECT_EQ(describe(r), describe(compiler::verify(plan)));
  EXPECT_EQ(r.stats.scratch, plan.shape.scratch);
}

} // namespace
