// tests/compiler/MutationTest.cpp: property test of the verifier against the
// reference interpreter (tests/support). Each generated plan is mutated at
// random — an op dropped, two ops swapped, a peer, a chunk or an operand
// order changed — and whenever the verifier still proves the mutant, the
// reference interpreter must find it correct by executing it on concrete,
// non-commutative values, with both posting orders and, for in-place plans,
// with in and out aliased.
#include "compiler/Verifier.h"
#include "ir/PlanIO.h"
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

/// The in-place hazard: an op that reads out or tmp (a send's buffer, a
/// reduce's or copy's source) reads the same slots of in instead — always
/// defined with in and out separate, overwritten or racing when aliased.
bool readInput(ir::Plan &plan, std::mt19937 &rng) {
  const uint32_t r = rng() % plan.shape.ranks;
  auto &ops = plan.programs[r].ops;
  const std::optional<uint32_t> inSlots = ir::bufferSlots(plan.shape, r, ir::Buffer::In);
  if (ops.empty() || !inSlots)
    return false;
  for (int tries = 0; tries < 8; ++tries) {
    ir::Op &op = ops[rng() % ops.size()];
    if (op.kind == ir::OpKind::Send && op.buf != ir::Buffer::In && op.slots().end() <= *inSlots) {
      op.buf = ir::Buffer::In;
      return true;
    }
    if (ir::hasSrc(op.kind) && op.src != ir::Buffer::In && op.srcChunk + op.count <= *inSlots) {
      op.src = ir::Buffer::In;
      return true;
    }
  }
  return false;
}

/// Appends to rank r's program a copy of in[x] into a fresh tmp slot: harmless
/// with in and out separate; aliased, a read of input that out's writes have
/// overwritten (`ordered`: after every other op of the rank) or may be
/// overwriting (no dependencies: a race).
void appendLateInputRead(ir::Plan &plan, uint32_t r, uint32_t x, bool ordered) {
  auto &ops = plan.programs[r].ops;
  ir::Op op;
  op.kind = ir::OpKind::Copy;
  op.buf = ir::Buffer::Tmp;
  op.chunk = static_cast<uint32_t>(plan.shape.scratch++);
  op.src = ir::Buffer::In;
  op.srcChunk = x;
  op.count = 1;
  if (ordered && !ops.empty()) {
    op.deps = ir::DepKind::After;
    for (uint32_t i = 0; i < ops.size(); ++i)
      op.after.push_back(i);
  }
  ops.push_back(op);
}

// The in-place layout is proven without a second symbolic run when the plain
// run is clean and every input read comes before the writes of its place in
// out (VerifyResult::aliasedByOrder). Differential test: on library plans and
// their mutants, that shortcut and the full aliased run give the same
// diagnostics and stats, and the shortcut is taken on most proven in-place
// plans.
TEST(VerifierMutation, InPlaceShortcutAgreesWithTheAliasedRun) {
  std::mt19937 rng(20261203);
  size_t inPlace = 0, byOrder = 0, compared = 0;
  auto summary = [](const compiler::VerifyResult &r) {
    std::string s;
    for (const compiler::Diagnostic &d : r.diagnostics)
      s += compiler::toString(d) + "\n";
    s += "dropped " + std::to_string(r.dropped) + " ops " + std::to_string(r.stats.ops) +
         " messages " + std::to_string(r.stats.messages) + " path " +
         std::to_string(r.stats.criticalPath) + " identical " +
         std::to_string(r.stats.identical);
    return s;
  };
  for (const sched::Algorithm &a : sched::algorithms())
    for (uint32_t p : {1u, 2u, 3u, 4u, 5u, 6u, 8u}) {
      sched::GenOptions o;
      o.ranks = p;
      o.root = ir::hasRoot(a.collective) ? p / 2 : 0;
      if (!a.accepts(o) || !a.inPlace)
        continue;
      ir::Plan base = a.build(o);
      base.shape.inPlace = true;
      for (int k = 0; k < 40; ++k) {
        ir::Plan mutant = base;
        if (k > 0 && k % 2 == 0 && !mutate(mutant, Mutation(rng() % int(Mutation::Count)), rng))
          continue;
        if (k % 2 == 1 && !readInput(mutant, rng))
          continue;
        for (bool noncommutative : {false, true}) {
          compiler::VerifyOptions vo;
          vo.noncommutative = noncommutative;
          vo.requireIdentical = rng() % 2;
          vo.stopAtFirstError = rng() % 4 == 0;
          const compiler::VerifyResult quick = compiler::verify(mutant, vo);
          vo.alwaysSimulateAliased = true;
          const compiler::VerifyResult full = compiler::verify(mutant, vo);
          EXPECT_FALSE(full.aliasedByOrder);
          EXPECT_EQ(quick.proven(), full.proven()) << a.name.str() << " p=" << p << " k=" << k;
          if (!vo.stopAtFirstError || full.proven()) {
            EXPECT_EQ(summary(quick), summary(full)) << a.name.str() << " p=" << p << " k=" << k;
          }
          ++compared;
          if (k == 0 && quick.proven()) {
            ++inPlace;
            byOrder += quick.aliasedByOrder;
          }
        }
      }
    }
  RecordProperty("compared", int(compared));
  RecordProperty("in_place", int(inPlace));
  RecordProperty("by_order", int(byOrder));
  EXPECT_GT(compared, 1000u);
  EXPECT_GT(inPlace, 20u);
  EXPECT_GT(byOrder * 2, inPlace) << byOrder << " of " << inPlace;
}

// Every proven in-place library plan with a late read of its input added —
// still proven with in and out separate — is refused in place, shortcut or
// not, with the same diagnostics both ways.
TEST(VerifierMutation, LateInputReadsAreRefusedInPlace) {
  size_t hazards = 0;
  for (const sched::Algorithm &a : sched::algorithms())
    for (uint32_t p : {2u, 3u, 4u, 5u, 8u}) {
      sched::GenOptions o;
      o.ranks = p;
      o.root = ir::hasRoot(a.collective) ? p - 1 : 0;
      if (!a.accepts(o) || !a.inPlace)
        continue;
      ir::Plan base = a.build(o);
      base.shape.inPlace = true;
      if (!compiler::verify(base).proven())
        continue;
      for (uint32_t r = 0; r < p; ++r) {
        const std::optional<uint32_t> in = ir::bufferSlots(base.shape, r, ir::Buffer::In);
        const std::optional<uint32_t> out = ir::bufferSlots(base.shape, r, ir::Buffer::Out);
        bool writesOut = false;
        for (const ir::Op &op : base.programs[r].ops)
          writesOut |= ir::writesBuf(op.kind) && op.dstSlots().buf == ir::Buffer::Out;
        if (!in || !out || !writesOut)
          continue;
        for (bool ordered : {true, false}) {
          ir::Plan hazard = base;
          appendLateInputRead(hazard, r, *in - 1, ordered);
          hazard.shape.inPlace = false;
          const compiler::VerifyResult separate = compiler::verify(hazard);
          hazard.shape.inPlace = true;
          const compiler::VerifyResult quick = compiler::verify(hazard);
          compiler::VerifyOptions vo;
          vo.alwaysSimulateAliased = true;
          const compiler::VerifyResult full = compiler::verify(hazard, vo);
          if (!separate.proven() || full.proven())
            continue; // out never overwrites that input slot's place
          ++hazards;
          EXPECT_FALSE(quick.proven()) << a.name.str() << " p=" << p << " rank " << r;
          EXPECT_FALSE(quick.aliasedByOrder) << a.name.str() << " p=" << p << " rank " << r;
          ASSERT_EQ(quick.diagnostics.size(), full.diagnostics.size());
          for (size_t i = 0; i < full.diagnostics.size(); ++i)
            EXPECT_EQ(compiler::toString(quick.diagnostics[i]),
                      compiler::toString(full.diagnostics[i]));
        }
      }
    }
  RecordProperty("hazards", int(hazards));
  EXPECT_GT(hazards, 50u);
}

// A plan that overwrites its input before reading it in place, or reads it
// unordered with the write, never takes the shortcut.
TEST(VerifierMutation, InPlaceHazardsTakeTheAliasedRun) {
  for (const char *f : {"input-write-in-place.yaml", "race-in-place.yaml"}) {
    llvm::Expected<ir::Plan> plan =
        ir::readPlanFile(std::string(COLLC_SOURCE_DIR) + "/tests/lit/verifier/" + f);
    ASSERT_TRUE(bool(plan)) << f;
    const compiler::VerifyResult r = compiler::verify(*plan);
    EXPECT_FALSE(r.proven()) << f;
    EXPECT_FALSE(r.aliasedByOrder) << f;
  }
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
