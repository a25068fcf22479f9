// compiler/passes/DeadOpElimination.cpp: removes work that no required output depends on.
//
// Preserves: the final value of every required out slot (docs/plan-format.md
// "Verification": all ranks, only the root for reduce, ranks >= 1 for
// exscan), every value a remaining op reads, and every ordering among the
// remaining ops (an op that waited for a removed one inherits its waits).
// Messages go as pairs: a send is removed exactly when its receive is, so the
// k-th/k-th matching of every channel still pairs the same messages.
//
// Algorithm: reaching definitions per rank in listing order, kept as runs of
// slots with one last writer (compiler/SegmentMap.h; with `in` and
// `out` separate — in a proven in-place plan no op reads `in` after `out`
// was written there), then a worklist from the last writers of required out
// slots: a live op makes the writers of what it reads live, and a live
// receive its send. Everything else is dead. Removing ops only removes waits
// and messages whose both ends go, so a deadlock-free plan stays so.
// A message end without a partner (a plan that does not verify) is kept, and
// so is everything it reads.
// With `keepMessages` (the per-rank pipeline, Pipeline.h) every message end
// is live: only local ops go, so a rank's result depends on its program alone.
#include "compiler/SegmentMap.h"
#include "compiler/passes/Analysis.h"
#include "compiler/passes/Pass.h"

#include <algorithm>
#include <array>

namespace collc::compiler {

namespace {

class DeadOpElimination final : public Pass {
public:
  explicit DeadOpElimination(bool keepMessages) : keepMessages_(keepMessages) {}
  llvm::StringRef name() const override { return "dce"; }
  bool run(ir::Plan &plan) override;

private:
  bool keepMessages_;
};

bool DeadOpElimination::run(ir::Plan &plan) {
  const uint32_t p = static_cast<uint32_t>(plan.programs.size());
  const Messages msgs(plan);
  // writers[r][i]: the ops whose values op i of rank r reads.
  std::vector<std::vector<llvm::SmallVector<uint32_t, 2>>> writers(p);
  std::vector<std::vector<uint8_t>> live(p);
  std::vector<MsgEnd> work;
  auto mark = [&](uint32_t r, uint32_t i) {
    if (!live[r][i]) {
      live[r][i] = 1;
      work.push_back({r, i});
    }
  };
  for (uint32_t r = 0; r < p; ++r) {
    const auto &ops = plan.programs[r].ops;
    if (ops.empty())
      continue; // (a plan holding some ranks' programs: the per-rank pipeline)
    writers[r].resize(ops.size());
    live[r].assign(ops.size(), 0);
    // Per buffer, runs of slots with the same last writer (-1: none).
    std::array<SegmentMap<int64_t>, 3> last;
    const SlotUse use = slotUse(ops);
    for (ir::Buffer b : {ir::Buffer::In, ir::Buffer::Out, ir::Buffer::Tmp}) {
      const uint32_t size = ir::bufferSlots(plan.shape, r, b).value_or(0);
      last[int(b)].reset(size, -1, use.flat(size));
    }
    auto clip = [&](const ir::Slots &s) {
      return std::min(s.end(), last[int(s.buf)].size());
    };
    for (uint32_t i = 0; i < ops.size(); ++i) {
      const Accesses a = accessesOf(ops[i]);
      auto &w = writers[r][i];
      for (const ir::Slots &s : a.reads)
        if (s.chunk < clip(s))
          last[int(s.buf)].visit(s.chunk, clip(s), [&](uint32_t, uint32_t, int64_t x) {
            if (x >= 0)
              w.push_back(uint32_t(x));
          });
      std::sort(w.begin(), w.end());
      w.erase(std::unique(w.begin(), w.end()), w.end());
      if (a.write && a.write->chunk < clip(*a.write))
        last[int(a.write->buf)].assign(a.write->chunk, clip(*a.write), int64_t(i));
      if (ir::isMessage(ops[i].kind) && (keepMessages_ || !msgs.partner(r, i)))
        mark(r, i);
    }
    if (ir::outRequired(plan.shape, r)) {
      const SegmentMap<int64_t> &out = last[int(ir::Buffer::Out)];
      out.visit(0, out.size(), [&](uint32_t, uint32_t, int64_t x) {
        if (x >= 0)
          mark(r, uint32_t(x));
      });
    }
  }
  while (!work.empty()) {
    const MsgEnd e = work.back();
    work.pop_back();
    for (uint32_t w : writers[e.rank][e.op])
      mark(e.rank, w);
    if (std::optional<MsgEnd> q = msgs.partner(e.rank, e.op))
      mark(q->rank, q->op);
  }
  bool changed = false;
  for (uint32_t r = 0; r < p; ++r) {
    if (llvm::all_of(live[r], [](uint8_t x) { return x != 0; }))
      continue;
    std::vector<bool> keep(live[r].begin(), live[r].end());
    auto &prog = plan.programs[r];
    eraseOps(prog, explicitDeps(prog.ops), keep);
    changed = true;
  }
  return changed;
}

} // namespace

std::unique_ptr<Pass> createDeadOpElimination(bool keepMessages) {
  return std::make_unique<DeadOpElimination>(keepMessages);
}

} // namespace collc::compiler
