// tests/passes/GeneratorSweepTest.cpp: every generator, optimized, is proven and never larger.
//
// For every registered algorithm, p in {1..17, 32, 64} and roots {0, p-1}
// (reduce): -O1 and -O2 succeed (the pipeline proves the result after every
// pass), the result is proven again here with the input's guarantees
// (identical results where -O0 had them; any associative operation where
// the generator promises it), the independent reference interpreter accepts
// it in both posting orders and, for in-place plans, with in and out
// aliased, and it never has more ops, scratch or critical path than -O0.
#include "PassTestSupport.h"

#include "compiler/passes/Pipeline.h"
#include "schedules/Generators.h"
#include "tests/support/ReferenceInterpreter.h"

#include "llvm/Support/raw_ostream.h"

namespace collc::test {
namespace {

std::vector<uint32_t> sweepRanks() {
  std::vector<uint32_t> ps;
  for (uint32_t p = 1; p <= 17; ++p)
    ps.push_back(p);
  ps.push_back(32);
  ps.push_back(64);
  return ps;
}

std::vector<uint32_t> sweepRoots(ir::Collective c, uint32_t p) {
  if (!ir::hasRoot(c) || p == 1)
    return {0};
  return {0, p - 1};
}

std::string label(const sched::Algorithm &a, uint32_t p, uint32_t root, unsigned level) {
  return (ir::name(a.collective) + " " + a.name + " p=" + std::to_string(p) +
          " root=" + std::to_string(root) + " -O" + std::to_string(level))
      .str();
}

/// The reference interpreter accepts `plan` in every layout and order it claims.
void expectReferenceAccepts(const ir::Plan &plan, const std::string &what) {
  for (bool alias : {false, true}) {
    if (alias && !plan.shape.inPlace)
      continue;
    for (ReadyOrder order : {ReadyOrder::Fifo, ReadyOrder::Lifo}) {
      RefOptions o;
      o.compareAsMultiset = plan.shape.commutative;
      o.aliasInOut = alias;
      o.readyOrder = order;
      // Every library allreduce but Swing's latency-optimal one builds one
      // reduction tree on all ranks (its partner groups do not nest).
      o.requireIdenticalTrees = plan.shape.collective == ir::Collective::Allreduce &&
                                plan.algorithm != "swing_latency";
      RefOutcome out = runReference(plan, o);
      EXPECT_TRUE(out.ok) << what << (alias ? " (aliased)" : "")
                          << (order == ReadyOrder::Lifo ? " (lifo)" : "") << ": " << out.error;
    }
  }
}

struct Tally {
  unsigned cases = 0, fewerOps = 0, lessScratch = 0, shorterPath = 0, leaner = 0;
};

void sweep(unsigned level, unsigned segments, Tally &t, bool checkSize) {
  for (const sched::Algorithm &a : sched::algorithms())
    for (uint32_t p : sweepRanks()) {
      if (segments > 1 && p > 17)
        continue;
      for (uint32_t root : sweepRoots(a.collective, p)) {
        const std::string what = label(a, p, root, level) +
                                 (segments > 1 ? " k=" + std::to_string(segments) : "");
        sched::GenOptions g;
        g.ranks = p;
        g.root = root;
        if (!a.accepts(g))
          continue; // the file's `require` refuses this p
        const ir::Plan base = a.build(g);
        compiler::VerifyResult before = compiler::verify(base);
        ASSERT_TRUE(before.proven()) << what;
        compiler::PipelineOptions opts;
        opts.level = level;
        opts.pipelineSegments = segments;
        llvm::Expected<ir::Plan> opt = compiler::optimize(base, opts);
        ASSERT_TRUE(bool(opt)) << what << ": " << llvm::toString(opt.takeError());
        compiler::VerifyOptions vo;
        vo.requireIdentical = before.stats.identical;
        compiler::VerifyResult after = compiler::verify(*opt, vo);
        EXPECT_TRUE(after.proven()) << what << "\n" << firstErrors(after);
        if (!a.needsCommutative) {
          vo.noncommutative = true;
          compiler::VerifyResult nc = compiler::verify(*opt, vo);
          EXPECT_TRUE(nc.proven()) << what << " (noncommutative)\n" << firstErrors(nc);
        }
        EXPECT_EQ(opt->shape.inPlace, base.shape.inPlace) << what;
        EXPECT_EQ(opt->shape.commutative, base.shape.commutative) << what;
        expectReferenceAccepts(*opt, what);
        const compiler::PlanStats &s0 = before.stats, &s = after.stats;
        if (checkSize) {
          EXPECT_LE(s.ops, s0.ops) << what;
          EXPECT_LE(s.scratch, s0.scratch) << what;
          EXPECT_LE(s.criticalPath, s0.criticalPath) << what;
          EXPECT_LE(s.messages, s0.messages) << what;
          // A one-rank plan is a lone result copy; every other allreduce and
          // reduce plan sheds at least its initial copy (the other
          // collectives' files start with none).
          const bool copyFirst = a.collective == ir::Collective::Allreduce ||
                                 a.collective == ir::Collective::Reduce;
          if (p > 1 && copyFirst) {
            EXPECT_TRUE(s.ops < s0.ops || s.scratch < s0.scratch) << what << ": not leaner";
          }
        }
        ++t.cases;
        t.fewerOps += s.ops < s0.ops;
        t.lessScratch += s.scratch < s0.scratch;
        t.shorterPath += s.criticalPath < s0.criticalPath;
        t.leaner += s.ops < s0.ops || s.scratch < s0.scratch;
      }
    }
}

void report(const char *what, const Tally &t) {
  llvm::outs() << what << ": " << t.cases << " plans, " << t.leaner
               << " strictly leaner (fewer ops or less scratch); " << t.fewerOps
               << " fewer ops, " << t.lessScratch << " less scratch, " << t.shorterPath
               << " shorter critical path\n";
}

TEST(GeneratorSweep, O1IsProvenAndNeverLarger) {
  Tally t;
  sweep(1, 0, t, /*checkSize=*/true);
  report("-O1", t);
  EXPECT_GT(t.leaner, 0u);
}

TEST(GeneratorSweep, O2IsProvenAndNeverLarger) {
  Tally t;
  sweep(2, 0, t, /*checkSize=*/true);
  report("-O2", t);
  EXPECT_GT(t.leaner, 0u);
}

TEST(GeneratorSweep, O2WithPipeliningIsProven) {
  for (unsigned k : {2u, 3u}) {
    Tally t;
    sweep(2, k, t, /*checkSize=*/false);
    report(k == 2 ? "-O2 k=2" : "-O2 k=3", t);
  }
}

} // namespace
} // namespace collc::test
