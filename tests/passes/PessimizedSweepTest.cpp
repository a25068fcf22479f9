// tests/passes/PessimizedSweepTest.cpp: -O2 undoes what a careless plan author does.
//
// Generated plans are already tight in messages and scratch, so they give
// coalesce, dce and copy-elim's receive rewrites little to do. Here each one
// is first made worse in four ways a hand-written plan might be:
//  - every multi-chunk message is sent chunk by chunk (coalesce joins them);
//  - every receive lands in fresh tmp slots and is then copied into place
//    (copy-elim receives into place, compact-scratch returns the slots);
//  - every recv_reduce receives into fresh tmp slots, then reduces (copy-elim
//    combines on arrival);
//  - every rank, once done, sends out[0] to its right neighbour, who drops
//    it (dce).
// The worse plan must be proven, and -O2 must bring it back to exactly the
// ops, messages and scratch -O2 gives the generator's own plan.
#include "PassTestSupport.h"

#include "compiler/passes/Analysis.h"
#include "compiler/passes/Pipeline.h"
#include "schedules/Generators.h"

namespace collc::test {
namespace {

/// Rewrites each rank's program op by op: `expand(op, out)` appends the
/// replacement ops (the last one stands for the original; each new op waits
/// for the previous one unless `parallel`).
template <typename Fn>
void rewritePrograms(ir::Plan &plan, Fn expand, bool parallel) {
  for (uint32_t r = 0; r < plan.programs.size(); ++r) {
    auto &ops = plan.programs[r].ops;
    const compiler::DepLists deps = compiler::explicitDeps(ops);
    llvm::SmallVector<ir::Op, 0> out;
    compiler::DepLists outDeps;
    std::vector<std::pair<uint32_t, uint32_t>> range(ops.size()); // new [first, last]
    for (uint32_t i = 0; i < ops.size(); ++i) {
      llvm::SmallVector<ir::Op, 4> repl;
      expand(r, ops[i], repl);
      llvm::SmallVector<uint32_t, 4> preds;
      for (uint32_t d : deps[i])
        for (uint32_t x = parallel ? range[d].first : range[d].second; x <= range[d].second; ++x)
          preds.push_back(x);
      const uint32_t first = static_cast<uint32_t>(out.size());
      for (size_t k = 0; k < repl.size(); ++k) {
        out.push_back(repl[k]);
        if (parallel || k == 0)
          outDeps.push_back(preds);
        else
          outDeps.push_back({uint32_t(out.size() - 2)});
      }
      range[i] = {first, uint32_t(out.size() - 1)};
    }
    compiler::writeDeps(out, outDeps);
    ops = std::move(out);
  }
}

ir::Plan pessimize(ir::Plan plan) {
  const uint32_t p = plan.shape.ranks;
  // 1. One message per chunk (parts listed together, waiting for the same ops).
  rewritePrograms(
      plan,
      [](uint32_t, const ir::Op &op, llvm::SmallVectorImpl<ir::Op> &out) {
        if (!ir::isMessage(op.kind) || op.count == 1) {
          out.push_back(op);
          return;
        }
        for (uint32_t k = 0; k < op.count; ++k) {
          ir::Op part = op;
          part.count = 1;
          part.chunk = op.chunk + k;
          if (op.hasDst)
            part.dstChunk = op.dstChunk + k;
          out.push_back(part);
        }
      },
      /*parallel=*/true);
  // 2./3. Receives through fresh tmp slots.
  std::vector<uint32_t> fresh(p, plan.shape.scratch);
  rewritePrograms(
      plan,
      [&](uint32_t r, const ir::Op &op, llvm::SmallVectorImpl<ir::Op> &out) {
        if (!ir::isMessage(op.kind) || op.kind == ir::OpKind::Send ||
            (op.kind == ir::OpKind::RecvReduce && op.hasDst)) {
          out.push_back(op);
          return;
        }
        ir::Op recv = op;
        recv.kind = ir::OpKind::Recv;
        recv.buf = ir::Buffer::Tmp;
        recv.chunk = fresh[r];
        fresh[r] += op.count;
        compiler::normalize(recv);
        ir::Op use;
        use.kind = op.kind == ir::OpKind::Recv ? ir::OpKind::Copy : ir::OpKind::Reduce;
        use.buf = op.buf;
        use.chunk = op.chunk;
        use.count = op.count;
        use.src = ir::Buffer::Tmp;
        use.srcChunk = recv.chunk;
        use.order = op.order;
        compiler::normalize(use);
        out.push_back(recv);
        out.push_back(use);
      },
      /*parallel=*/false);
  // 4. Once done, each rank whose out holds a result sends out[0] to its
  // right neighbour, who drops it.
  for (uint32_t r = 0; r < p && p >= 2; ++r) {
    if (!ir::bufferSlots(plan.shape, r, ir::Buffer::Out) || !ir::outRequired(plan.shape, r))
      continue;
    auto &ops = plan.programs[r].ops;
    ir::Op send;
    send.kind = ir::OpKind::Send;
    send.peer = (r + 1) % p;
    send.buf = ir::Buffer::Out;
    for (uint32_t i = 0; i < ops.size(); ++i)
      send.after.push_back(i);
    send.deps = send.after.empty() ? ir::DepKind::None : ir::DepKind::After;
    ops.push_back(send);
    const uint32_t to = (r + 1) % p;
    ir::Op recv;
    recv.kind = ir::OpKind::Recv;
    recv.peer = r;
    recv.buf = ir::Buffer::Tmp;
    recv.chunk = fresh[to]++;
    plan.programs[to].ops.push_back(recv);
  }
  for (uint32_t f : fresh)
    plan.shape.scratch = std::max(plan.shape.scratch, f);
  return plan;
}

TEST(PessimizedSweep, O2RecoversTheGeneratorsOptimizedPlan) {
  unsigned cases = 0;
  for (const sched::Algorithm &a : sched::algorithms())
    for (uint32_t p : {2u, 3u, 4u, 5u, 7u, 8u, 9u, 12u, 13u, 16u, 17u, 32u})
      for (uint32_t root : {0u, p - 1}) {
        if (root != 0 && !ir::hasRoot(a.collective))
          continue;
        const std::string what =
            (a.name + " " + ir::name(a.collective) + " p=" + std::to_string(p) + " root=" +
             std::to_string(root))
                .str();
        sched::GenOptions g;
        g.ranks = p;
        g.root = root;
        if (!a.accepts(g))
          continue; // the file's `require` refuses this p
        // Not for alltoall, gather and scatter: their plans gather blocks
        // into one run before a message (Bruck's packing, a tree's subtree
        // in tmp). Sent chunk by chunk, copy-elim sends each block from
        // where it already is (a rank's own block from in) or receives it
        // straight into its final slot, where they are no longer one run,
        // so -O2 reaches another plan: fewer copies and less scratch, more
        // messages, not the generator's.
        // Nor barriers, which no pass changes (compiler::optimize).
        if (a.collective == ir::Collective::Alltoall ||
            a.collective == ir::Collective::Gather || a.collective == ir::Collective::Scatter ||
            a.collective == ir::Collective::Barrier)
          continue;
        const ir::Plan base = a.build(g);
        const ir::Plan worse = pessimize(base);
        compiler::VerifyResult rw = compiler::verify(worse);
        ASSERT_TRUE(rw.proven()) << what << " (pessimized)\n" << firstErrors(rw);
        ASSERT_GT(rw.stats.messages, compiler::verify(base).stats.messages) << what;
        compiler::PipelineOptions o;
        llvm::Expected<ir::Plan> fromBase = compiler::optimize(base, o);
        llvm::Expected<ir::Plan> fromWorse = compiler::optimize(worse, o);
        ASSERT_TRUE(fromBase && fromWorse) << what << ": "
                                           << (fromWorse ? "" : llvm::toString(fromWorse.takeError()));
        const compiler::PlanStats s = compiler::verify(*fromBase).stats;
        const compiler::PlanStats t = compiler::verify(*fromWorse).stats;
        EXPECT_EQ(t.ops, s.ops) << what;
        EXPECT_EQ(t.messages, s.messages) << what;
        EXPECT_EQ(t.scratch, s.scratch) << what;
        EXPECT_LE(t.criticalPath, s.criticalPath) << what;
        ++cases;
      }
  EXPECT_GT(cases, 100u);
}

} // namespace
} // namespace collc::test
