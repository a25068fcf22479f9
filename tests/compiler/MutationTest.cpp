// tests/compiler/MutationTest.cpp: property test of the verifier against the
// reference interpreter (tests/support). Each generated plan is mutated at
// random — an op dropped, two ops swapped, a peer, a chunk or an operand
// order changed — and whenever the verifier still proves the mutant, the
// reference interpreter must find it correct by executing it on concrete,
// non-commutative values, with both posting orders and, for in-place plans,
// with in and out aliased.
#include "compiler/Verifier.h"
#include "schedules/Generators.h"
#include "tests/support/ReferenceInterpreter.h"

#include <gtest/gtest.h>

#include <random>

using namespace collc;

namespace {

enum class Mutation { Drop, Swap, Peer, Chunk, Order, Count };
const char *mutationName(Mutation m) {
  static const char *const names[] = {"drop", "swap", "peer", "chunk", "order"};
  return names[int(m)];
}

/// Applies mutation `m` somewhere in `plan`; false if it found nothing to mutate.
bool mutate(ir::Plan &plan, Mutation m, std::mt19937 &rng) {
  const uint32_t p = plan.shape.ranks;
  uint32_t r = rng() % p;
  auto &ops = plan.programs[r].ops;
  if (ops.empty())
    return false;
  uint32_t i = rng() % ops.size();
  ir::Op &op = ops[i];
  switch (m) {
  case Mutation::Drop:
    ops.erase(ops.begin() + i);
    for (ir::Op &o : ops) {
      llvm::SmallVector<uint32_t, 2> kept;
      for (uint32_t d : o.after)
        if (d != i)
          kept.push_back(d > i ? d - 1 : d);
      o.after = kept;
      if (o.deps == ir::DepKind::After && o.after.empty())
        o.deps = ir::DepKind::None;
    }
    return true;
  case Mutation::Swap: {
    // Exchange the work of two step-mode ops of different steps, keeping the
    // step numbers in place: the two now run in each other's order.
    uint32_t j = rng() % ops.size();
    if (ops[i].deps != ir::DepKind::Step || ops[j].deps != ir::DepKind::Step ||
        ops[i].step == ops[j].step)
      return false;
    std::swap(ops[i], ops[j]);
    std::swap(ops[i].step, ops[j].step);
    return true;
  }
  case Mutation::Peer:
    if (!ir::isMessage(op.kind) || p < 2)
      return false;
    op.peer = rng() % p;
    return true;
  case Mutation::Chunk: {
    std::optional<uint32_t> n = ir::bufferSlots(plan.shape, r, op.buf);
    if (!n || *n < op.count + 1)
      return false;
    op.chunk = rng() % (*n - op.count + 1);
    return true;
  }
  case Mutation::Order:
    if (!ir::hasOrder(op.kind))
      return false;
    op.order = op.order == ir::Order::OtherFirst ? ir::Order::BufFirst : ir::Order::OtherFirst;
    return true;
  case Mutation::Count:
    break;
  }
  return false;
}

TEST(VerifierMutation, ProvenMutantsAreCorrectOnConcreteValues) {
  std::mt19937 rng(20261201);
  size_t tried = 0, proven = 0;
  for (const sched::Algorithm &a : sched::algorithms())
    for (uint32_t p : {2u, 3u, 4u, 5u, 7u, 8u}) {
      sched::GenOptions o;
      o.ranks = p;
      o.root = ir::hasRoot(a.collective) ? p - 1 : 0;
      if (!a.accepts(o))
        continue; // the file's `require` refuses this p
      const ir::Plan base = a.build(o);
      for (int k = 0; k < 60; ++k) {
        Mutation m = Mutation(rng() % int(Mutation::Count));
        ir::Plan mutant = base;
        if (!mutate(mutant, m, rng))
          continue;
        ++tried;
        bool noncommutative = rng() % 2;
        compiler::VerifyOptions vo;
        vo.noncommutative = noncommutative;
        compiler::VerifyResult r = compiler::verify(mutant, vo);
        if (!r.proven())
          continue;
        ++proven;
        for (bool aliased : {false, true}) {
          if (aliased && !mutant.shape.inPlace)
            continue;
          for (test::ReadyOrder order : {test::ReadyOrder::Fifo, test::ReadyOrder::Lifo}) {
            test::RefOptions ro;
            ro.compareAsMultiset = mutant.shape.commutative && !noncommutative;
            ro.aliasInOut = aliased;
            ro.readyOrder = order;
            test::RefOutcome out = test::runReference(mutant, ro);
            EXPECT_TRUE(out.ok) << a.name.str() << " p=" << p << " mutation "
                                << mutationName(m) << (aliased ? " aliased" : "") << ": "
                                << out.error;
          }
        }
      }
    }
  RecordProperty("tried", int(tried));
  RecordProperty("proven", int(proven));
  // The mutations must mostly break plans, or the test shows nothing.
  EXPECT_GT(tried, 1000u);
  EXPECT_LT(proven * 4, tried) << proven << " of " << tried << " mutants proven";
}

TEST(VerifierMutation, RefusedMutantsThatExecuteWrongAreNeverProven) {
  // The converse view on the same space: whatever the reference interpreter
  // finds wrong, the verifier refuses.
  std::mt19937 rng(7);
  size_t wrong = 0;
  for (const sched::Algorithm &a : sched::algorithms())
    for (uint32_t p : {3u, 6u}) {
      sched::GenOptions o;
      o.ranks = p;
      if (!a.accepts(o))
        continue;
      const ir::Plan base = a.build(o);
      for (int k = 0; k < 40; ++k) {
        Mutation m = Mutation(rng() % int(Mutation::Count));
        ir::Plan mutant = base;
        if (!mutate(mutant, m, rng))
          continue;
        test::RefOptions ro;
        ro.compareAsMultiset = mutant.shape.commutative;
        if (test::runReference(mutant, ro).ok)
          continue;
        ++wrong;
        EXPECT_FALSE(compiler::verify(mutant).proven())
            << a.name.str() << " p=" << p << " mutation " << mutationName(m);
      }
    }
  EXPECT_GT(wrong, 100u);
}

} // namespace
