// compiler/passes/CoalesceMessages.cpp: one message where there were several.
//
// Preserves: every value moved and combined (slot by slot, in the same
// operand order), the matching of every other message, and the timing of the
// plan: merged sends were posted together and so were their receives, so
// the merged message completes exactly when each part did.
//
// Two consecutive messages of a channel a→b — the k-th and (k+1)-th send
// a→b, matched with the k-th and (k+1)-th receive from a at b — merge when
//  - both sends have the same dependencies, and so do both receives (after
//    transitive reduction equal lists mean equal ancestor sets: the ops
//    become ready together);
//  - the sends read adjacent ranges of one buffer, and the receives write
//    the adjacent ranges in the same direction (second after first, or both
//    before), of one kind: both recv, or both recv_reduce with the same
//    order and, in three-address form, adjacent dst ranges too.
// The merged op takes the place of the first part at each end; no other
// message of the channel lies between the parts, so the k-th/k-th pairing
// still holds, and ops that waited for a part wait for the merged op. Runs
// of parts merge in one go; rounds repeat until nothing merges, since a merge
// can make the dependencies of later messages equal.
// Merging ops with equal ancestor sets cannot create a cycle: a path from
// one part to another would put the first among the second's ancestors.
// With `maxRounds` = 1 (the per-rank pipeline, Pipeline.h) the merges of a
// channel depend only on the programs of its two ranks.
#include "compiler/passes/Analysis.h"
#include "compiler/passes/Pass.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <map>
#include <optional>

namespace collc::compiler {

namespace {

/// Where `b` continues `a`: +1 right after it, -1 right before it, 0 neither.
int adjacency(const ir::Slots &a, const ir::Slots &b) {
  if (a.buf != b.buf)
    return 0;
  if (a.end() == b.chunk)
    return 1;
  if (b.end() == a.chunk)
    return -1;
  return 0;
}

/// `a` and `b` joined; precondition: adjacent.
ir::Slots join(const ir::Slots &a, const ir::Slots &b) {
  return {a.buf, std::min(a.chunk, b.chunk), a.count + b.count};
}

/// The merged pair of one or more consecutive messages of a channel.
struct Merged {
  ir::Op send, recv;
  llvm::SmallVector<uint32_t, 4> sends, recvs; ///< part indices, first = the kept op
};

/// True when message (s2, r2) can extend `m`, and extends it.
bool extend(Merged &m, const ir::Op &s2, const ir::Op &r2) {
  const ir::Op &s1 = m.send, &r1 = m.recv;
  if (r1.kind != r2.kind || r1.hasDst != r2.hasDst ||
      (ir::hasOrder(r1.kind) && r1.order != r2.order))
    return false;
  const int dir = adjacency(s1.slots(), s2.slots());
  if (dir == 0 || adjacency(r1.slots(), r2.slots()) != dir)
    return false;
  if (r1.hasDst && adjacency(r1.dstSlots(), r2.dstSlots()) != dir)
    return false;
  const ir::Slots s = join(s1.slots(), s2.slots()), r = join(r1.slots(), r2.slots());
  m.send.chunk = s.chunk;
  m.send.count = s.count;
  m.recv.chunk = r.chunk;
  m.recv.count = r.count;
  if (r1.hasDst)
    m.recv.dstChunk = join(r1.dstSlots(), r2.dstSlots()).chunk;
  return true;
}

class MessageCoalescing final : public Pass {
public:
  explicit MessageCoalescing(unsigned maxRounds) : maxRounds_(maxRounds) {}
  llvm::StringRef name() const override { return "coalesce"; }

  bool run(ir::Plan &plan) override {
    bool changed = false;
    for (unsigned n = 0; (maxRounds_ == 0 || n < maxRounds_) && round(plan); ++n)
      changed = true;
    return changed;
  }

private:
  static bool round(ir::Plan &plan);
  unsigned maxRounds_;
};

bool MessageCoalescing::round(ir::Plan &plan) {
  const uint32_t p = static_cast<uint32_t>(plan.programs.size());
  // Per rank, built when first needed: the dependency graph as written, and
  // the transitively reduced lists (equal lists = equal ancestor sets).
  std::vector<std::optional<ir::DepGraph>> graphs(p);
  std::vector<std::optional<DepLists>> reduced(p);
  auto graph = [&](uint32_t r) -> const ir::DepGraph & {
    if (!graphs[r])
      graphs[r].emplace(plan.programs[r].ops);
    return *graphs[r];
  };
  auto deps = [&](uint32_t r) -> const DepLists & {
    if (!reduced[r]) {
      reduced[r] = explicitDeps(plan.programs[r].ops);
      reduceTransitively(*reduced[r]);
    }
    return *reduced[r];
  };
  // When a part waits directly for the first part, the first is among its
  // ancestors but not among its own: their ancestor sets differ and they
  // cannot merge. This settles most pairs (a step's send after the previous
  // step's) without the reduced lists.
  auto waitsFor = [&](uint32_t r, uint32_t later, uint32_t first) {
    const llvm::ArrayRef<uint32_t> preds = graph(r).preds(later);
    return std::find(preds.begin(), preds.end(), first) != preds.end();
  };
  // Channels in a fixed order: (from, to) -> the sends and the receives.
  std::map<std::pair<uint32_t, uint32_t>, std::pair<std::vector<uint32_t>, std::vector<uint32_t>>>
      channels;
  for (uint32_t r = 0; r < p; ++r) {
    const auto &ops = plan.programs[r].ops;
    for (uint32_t i = 0; i < ops.size(); ++i) {
      const ir::Op &op = ops[i];
      if (!ir::isMessage(op.kind) || op.peer >= p || op.peer == r)
        continue;
      if (op.kind == ir::OpKind::Send)
        channels[{r, op.peer}].first.push_back(i);
      else
        channels[{op.peer, r}].second.push_back(i);
    }
  }
  std::vector<Merged> merges;
  for (const auto &[key, ends] : channels) {
    const auto [a, b] = key;
    const auto &sends = ends.first, &recvs = ends.second;
    const auto &opsA = plan.programs[a].ops, &opsB = plan.programs[b].ops;
    const size_t n = std::min(sends.size(), recvs.size());
    for (size_t k = 0; k < n;) {
      Merged m{opsA[sends[k]], opsB[recvs[k]], {sends[k]}, {recvs[k]}};
      size_t next = k + 1;
      for (; next < n; ++next) {
        const uint32_t s2 = sends[next], r2 = recvs[next];
        if (waitsFor(a, s2, sends[k]) || waitsFor(b, r2, recvs[k]))
          break;
        if (opsA[s2].count != opsB[r2].count)
          break;
        Merged grown = m;
        if (!extend(grown, opsA[s2], opsB[r2]))
          break;
        if (deps(a)[s2] != deps(a)[sends[k]] || deps(b)[r2] != deps(b)[recvs[k]])
          break;
        m = std::move(grown);
        m.sends.push_back(s2);
        m.recvs.push_back(r2);
      }
      if (m.sends.size() > 1)
        merges.push_back(std::move(m));
      k = next;
    }
  }
  if (merges.empty())
    return false;
  // Apply: the first part becomes the merged op, the others go; waits on a
  // part become waits on the merged op.
  std::vector<std::vector<uint32_t>> target(p);
  for (uint32_t r = 0; r < p; ++r) {
    target[r].resize(plan.programs[r].ops.size());
    for (uint32_t i = 0; i < target[r].size(); ++i)
      target[r][i] = i;
  }
  for (const Merged &m : merges) {
    const uint32_t a = m.recv.peer, b = m.send.peer;
    plan.programs[a].ops[m.sends[0]].chunk = m.send.chunk;
    plan.programs[a].ops[m.sends[0]].count = m.send.count;
    ir::Op &rv = plan.programs[b].ops[m.recvs[0]];
    rv.chunk = m.recv.chunk;
    rv.count = m.recv.count;
    rv.dstChunk = m.recv.dstChunk;
    for (size_t t = 1; t < m.sends.size(); ++t) {
      target[a][m.sends[t]] = m.sends[0];
      target[b][m.recvs[t]] = m.recvs[0];
    }
  }
  for (uint32_t r = 0; r < p; ++r) {
    auto &ops = plan.programs[r].ops;
    if (ops.empty())
      continue;
    std::vector<bool> keep(ops.size());
    for (uint32_t i = 0; i < ops.size(); ++i)
      keep[i] = target[r][i] == i;
    if (llvm::all_of(keep, [](bool k) { return k; }))
      continue;
    // Waits on a removed part move to its merged op, which is earlier.
    DepLists d = deps(r);
    for (auto &list : d) {
      for (uint32_t &x : list)
        x = target[r][x];
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
    }
    eraseOps(plan.programs[r], std::move(d), keep);
  }
  return true;
}

} // namespace

std::unique_ptr<Pass> createMessageCoalescing(unsigned maxRounds) {
  return std::make_unique<MessageCoalescing>(maxRounds);
}

} // namespace collc::compiler
