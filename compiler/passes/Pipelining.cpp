// compiler/passes/Pipelining.cpp: k segments per message, so transfer and reduction overlap.
//
// Preserves: every value, slot by slot, and the matching of messages. Chunk c
// of C becomes chunks c·k .. c·k+k-1 of k·C, which together hold exactly the
// elements of the old chunk (docs/plan-format.md, "Chunks"), so every range scales by k;
// `scratch` scales by k as well (a tmp slot holds one chunk). Each op then
// splits into k ops over consecutive sub-ranges of equal length, listed
// together in its place: the j-th segment of a send still meets the j-th
// segment of its receive, as both ends split alike.
//
// Dependencies are the exact data dependencies of the split listing
// (relax-deps' rule), so a node of a tree or chain forwards segment j while
// segment j+1 is still arriving. Why it cannot deadlock: a dependency between
// segments lies under a dependency path between their ops in the original
// plan, which completes every op (by induction on its completion time, the
// segments of an op complete too: their dependencies and their partner's
// belong to ops that completed earlier).
//
// Cost: k·(messages) latencies instead of one per message, k-fold ops; the
// time of a depth-h chain drops from about h(α + nβ) towards
// (h + k - 1)(α + nβ/k). Off unless asked for (see Pipeline.h).
#include "compiler/passes/Analysis.h"
#include "compiler/passes/Pass.h"

namespace collc::compiler {

namespace {

class Pipelining final : public Pass {
public:
  explicit Pipelining(uint32_t k) : k_(k) {}
  llvm::StringRef name() const override { return "pipeline"; }
  bool isSizeTradeoff() const override { return true; }
  bool run(ir::Plan &plan) override;

private:
  uint32_t k_;
};

bool Pipelining::run(ir::Plan &plan) {
  if (k_ <= 1 || plan.numOps() == 0)
    return false;
  // Stay inside what the format allows (ir::checkShape).
  if (uint64_t(plan.shape.chunks) * k_ > ir::maxChunks ||
      uint64_t(plan.shape.scratch) * k_ > ir::maxScratch)
    return false;
  plan.shape.chunks *= k_;
  plan.shape.scratch *= k_;
  for (uint32_t r = 0; r < plan.programs.size(); ++r) {
    auto &ops = plan.programs[r].ops;
    llvm::SmallVector<ir::Op, 0> split;
    split.reserve(ops.size() * k_);
    for (const ir::Op &op : ops) {
      // The op's range [c·k, (c+n)·k) in k segments of n slots.
      for (uint32_t j = 0; j < k_; ++j) {
        ir::Op s = op;
        s.chunk = op.chunk * k_ + j * op.count;
        if (ir::hasSrc(op.kind))
          s.srcChunk = op.srcChunk * k_ + j * op.count;
        if (op.hasDst)
          s.dstChunk = op.dstChunk * k_ + j * op.count;
        s.deps = ir::DepKind::None;
        normalize(s);
        split.push_back(std::move(s));
      }
    }
    ops = std::move(split);
    writeDeps(ops, dataDeps(plan.shape, r, ops));
  }
  return true;
}

} // namespace

std::unique_ptr<Pass> createPipelining(uint32_t segments) {
  return std::make_unique<Pipelining>(segments);
}

} // namespace collc::compiler
