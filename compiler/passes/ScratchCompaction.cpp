// compiler/passes/ScratchCompaction.cpp: fewer tmp slots, by reusing dead ones.
//
// Preserves: every op, every dependency and every value — only the tmp slot
// numbers change, and `scratch` shrinks to the most slots a rank then uses.
//
// A *web* is one value's life in one tmp slot: the op that writes it and
// every op that reads it (a two-address combine reads and rewrites the same
// web). Webs accessed together by a range op form a *group* that must keep
// its relative layout, so a group moves as a whole by one offset. Two webs
// may share a slot only if one's accesses all happen before the other is
// written — by a dependency path that is already there, so compaction adds
// no dependency and costs no concurrency (it runs last for that reason).
// Groups are placed first-fit, in the order they are first written, at the
// lowest offset where every web fits. A rank keeps its layout when it already
// fits in the new scratch, or when first-fit does not beat it. With `perRank`
// (the per-rank pipeline, Pipeline.h) a rank takes its compacted layout
// whenever first-fit beats its own, whatever the other ranks need, so its
// result depends on its program alone.
//
// Two webs on one slot never both hold live values at a time, and every read
// still sees its own writer, because of the ordering condition; ops that read
// and write tmp stay well-formed because an op's operands are never placed on
// one slot (no op is ordered before itself), which checkOp confirms.
#include "compiler/passes/Analysis.h"
#include "compiler/passes/Pass.h"

#include "llvm/ADT/STLExtras.h"

#include <numeric>

namespace collc::compiler {

namespace {

/// One operand of an op that lies in tmp.
struct TmpRef {
  uint32_t op;
  uint8_t which; ///< 0 buf, 1 src, 2 dst
  ir::Slots slots;
};

/// The compacted layout of one rank: new tmp chunk per reference, or nullopt
/// when the rank should keep its layout.
struct RankLayout {
  std::vector<TmpRef> refs;
  std::vector<uint32_t> newChunk; ///< per ref
  uint32_t oldUsed = 0, newUsed = 0;
  bool analyzable = true;
};

class UnionFind {
public:
  uint32_t add() {
    parent_.push_back(static_cast<uint32_t>(parent_.size()));
    return parent_.back();
  }
  uint32_t find(uint32_t x) {
    while (parent_[x] != x)
      x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void unite(uint32_t a, uint32_t b) {
    a = find(a), b = find(b);
    if (a != b)
      parent_[std::max(a, b)] = std::min(a, b);
  }

private:
  std::vector<uint32_t> parent_;
};

RankLayout compactRank(const ir::Plan &plan, uint32_t r) {
  RankLayout L;
  const auto &ops = plan.programs[r].ops;
  const uint32_t S = plan.shape.scratch;
  // Tmp operands, in listing order.
  for (uint32_t i = 0; i < ops.size(); ++i) {
    const ir::Op &op = ops[i];
    if (op.buf == ir::Buffer::Tmp)
      L.refs.push_back({i, 0, op.slots()});
    if (ir::hasSrc(op.kind) && op.src == ir::Buffer::Tmp)
      L.refs.push_back({i, 1, op.srcSlots()});
    if (op.hasDst && op.dst == ir::Buffer::Tmp)
      L.refs.push_back({i, 2, op.dstSlots()});
  }
  for (const TmpRef &t : L.refs)
    L.oldUsed = std::max(L.oldUsed, t.slots.end());
  if (L.refs.empty())
    return L;

  // Webs: per slot, the web its current value belongs to.
  struct Web {
    uint32_t slot;
    uint32_t def; ///< the op that wrote it
    llvm::SmallVector<uint32_t, 4> accesses;
  };
  std::vector<Web> webs;
  UnionFind groups;
  std::vector<int64_t> current(S, -1);
  std::vector<llvm::SmallVector<uint32_t, 2>> refWebs(L.refs.size()); // web of each slot
  size_t ref = 0;
  for (uint32_t i = 0; i < ops.size(); ++i) {
    const ir::Op &op = ops[i];
    const size_t first = ref;
    while (ref < L.refs.size() && L.refs[ref].op == i)
      ++ref;
    // Reads first (buf of send/combine, src), then the write.
    auto isRead = [&](const TmpRef &t) {
      if (t.which == 1)
        return true;
      if (t.which == 2)
        return false;
      return op.kind == ir::OpKind::Send || ir::hasOrder(op.kind);
    };
    auto isWrite = [&](const TmpRef &t) {
      if (t.which == 2)
        return true;
      if (t.which == 1)
        return false;
      return ir::writesBuf(op.kind) && !op.hasDst;
    };
    for (size_t x = first; x < ref; ++x) {
      const TmpRef &t = L.refs[x];
      if (!isRead(t))
        continue;
      for (uint32_t s = t.slots.chunk; s < t.slots.end(); ++s) {
        if (s >= S || current[s] < 0) {
          L.analyzable = false; // reads a slot nothing wrote
          return L;
        }
        const uint32_t w = uint32_t(current[s]);
        if (webs[w].accesses.back() != i)
          webs[w].accesses.push_back(i);
        refWebs[x].push_back(w);
        groups.unite(w, refWebs[x].front());
      }
    }
    for (size_t x = first; x < ref; ++x) {
      const TmpRef &t = L.refs[x];
      if (!isWrite(t))
        continue;
      const bool rmw = isRead(t);
      for (uint32_t s = t.slots.chunk; s < t.slots.end(); ++s) {
        if (s >= S) {
          L.analyzable = false;
          return L;
        }
        if (!rmw) {
          webs.push_back({s, i, {i}});
          groups.add();
          current[s] = int64_t(webs.size() - 1);
          refWebs[x].push_back(uint32_t(webs.size() - 1));
        }
        groups.unite(uint32_t(current[s]), refWebs[x].front());
      }
    }
  }

  // Groups, in the order they are first written.
  const Ancestry anc(explicitDeps(ops));
  std::vector<uint32_t> groupOf(webs.size());
  std::vector<std::vector<uint32_t>> members;
  std::vector<int64_t> index(webs.size(), -1);
  for (uint32_t w = 0; w < webs.size(); ++w) {
    const uint32_t g = groups.find(w);
    if (index[g] < 0) {
      index[g] = int64_t(members.size());
      members.emplace_back();
    }
    groupOf[w] = uint32_t(index[g]);
    members[groupOf[w]].push_back(w);
  }
  // X's accesses all precede Y's write, or the other way round.
  auto disjoint = [&](const Web &x, const Web &y) {
    const Web &early = x.def < y.def ? x : y, &late = x.def < y.def ? y : x;
    return llvm::all_of(early.accesses, [&](uint32_t a) { return anc.before(a, late.def); });
  };
  std::vector<std::vector<uint32_t>> placed; // physical slot -> webs
  std::vector<int64_t> offset(members.size(), 0);
  for (uint32_t g = 0; g < members.size(); ++g) {
    uint32_t lo = ~0u;
    for (uint32_t w : members[g])
      lo = std::min(lo, webs[w].slot);
    for (uint32_t base = 0;; ++base) {
      const int64_t delta = int64_t(base) - int64_t(lo);
      bool fits = true;
      for (uint32_t w : members[g]) {
        const uint32_t phys = uint32_t(webs[w].slot + delta);
        if (phys < placed.size())
          for (uint32_t other : placed[phys])
            if (!disjoint(webs[w], webs[other])) {
              fits = false;
              break;
            }
        if (!fits)
          break;
      }
      if (!fits)
        continue;
      offset[g] = delta;
      for (uint32_t w : members[g]) {
        const uint32_t phys = uint32_t(webs[w].slot + delta);
        if (phys >= placed.size())
          placed.resize(phys + 1);
        placed[phys].push_back(w);
      }
      break;
    }
  }
  L.newUsed = static_cast<uint32_t>(placed.size());
  L.newChunk.resize(L.refs.size());
  for (size_t x = 0; x < L.refs.size(); ++x)
    L.newChunk[x] = uint32_t(L.refs[x].slots.chunk + offset[groupOf[refWebs[x].front()]]);
  return L;
}

/// Moves rank `r`'s tmp operands to `L`'s layout; false (and `ops` partly
/// moved) when an op is then malformed.
bool relabel(const ir::Shape &shape, uint32_t r, const RankLayout &L,
             llvm::MutableArrayRef<ir::Op> ops) {
  for (size_t x = 0; x < L.refs.size(); ++x) {
    ir::Op &op = ops[L.refs[x].op];
    (L.refs[x].which == 0   ? op.chunk
     : L.refs[x].which == 1 ? op.srcChunk
                            : op.dstChunk) = L.newChunk[x];
  }
  for (uint32_t i = 0; i < ops.size(); ++i)
    if (ir::checkOp(shape, r, ops, i))
      return false;
  return true;
}

class ScratchCompaction final : public Pass {
public:
  explicit ScratchCompaction(bool perRank) : perRank_(perRank) {}
  llvm::StringRef name() const override { return "compact-scratch"; }
  bool run(ir::Plan &plan) override;

private:
  /// Each rank on its own: it takes its compacted layout when that uses
  /// fewer slots (and stays well-formed); scratch becomes the most slots a
  /// rank then uses.
  static bool runPerRank(ir::Plan &plan);
  bool perRank_;
};

bool ScratchCompaction::runPerRank(ir::Plan &plan) {
  bool changed = false;
  uint32_t scratch = 0;
  for (uint32_t r = 0; r < plan.programs.size(); ++r) {
    auto &ops = plan.programs[r].ops;
    if (ops.empty())
      continue;
    const RankLayout L = compactRank(plan, r);
    uint32_t used = L.oldUsed;
    if (L.analyzable && L.newUsed < L.oldUsed) {
      llvm::SmallVector<ir::Op, 0> before = ops;
      if (relabel(plan.shape, r, L, ops)) {
        used = L.newUsed;
        changed = true;
      } else {
        ops = std::move(before);
      }
    }
    scratch = std::max(scratch, used);
  }
  if (scratch >= plan.shape.scratch && !changed)
    return false;
  plan.shape.scratch = std::min(scratch, plan.shape.scratch);
  return true;
}

bool ScratchCompaction::run(ir::Plan &plan) {
  const uint32_t p = static_cast<uint32_t>(plan.programs.size());
  if (perRank_)
    return runPerRank(plan);
  std::vector<RankLayout> layouts(p);
  uint32_t scratch = 0;
  for (uint32_t r = 0; r < p; ++r) {
    layouts[r] = compactRank(plan, r);
    const RankLayout &L = layouts[r];
    if (!L.analyzable)
      return false; // not a proven plan: leave it alone
    scratch = std::max(scratch, std::min(L.oldUsed, L.newUsed));
  }
  if (scratch >= plan.shape.scratch)
    return false;
  ir::Plan result = plan;
  result.shape.scratch = scratch;
  for (uint32_t r = 0; r < p; ++r) {
    const RankLayout &L = layouts[r];
    if (L.oldUsed <= scratch)
      continue; // already fits
    if (!relabel(result.shape, r, L, result.programs[r].ops))
      return false; // an operand pair landed on one slot; keep the plan
  }
  plan = std::move(result);
  return true;
}

} // namespace

std::unique_ptr<Pass> createScratchCompaction(bool perRank) {
  return std::make_unique<ScratchCompaction>(perRank);
}

} // namespace collc::compiler
