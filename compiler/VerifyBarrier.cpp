// compiler/VerifyBarrier.cpp: the verifier's proof of a barrier.
//
// A barrier's tokens carry no data, so what the plan must show is an order:
// no rank's ops may all complete before every other rank has started one
// (docs/plan-format.md, "Barrier"). The proof follows the happens-before
// order of the plan: an op starts after its dependencies complete, and a
// receive completes after its matching send was posted — nothing else is
// assumed (a send may complete as soon as it is posted, as an eager one
// does). For each op the verifier collects the ranks with an op in its past
// (itself included); a rank whose ops together miss rank j may leave the
// barrier before rank j enters it, which is `unsynchronized`, naming both.
#include "compiler/VerifierImpl.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace collc::compiler::detail {

namespace {

/// A set of ranks as sorted, disjoint, non-adjacent half-open intervals:
/// the ranks a dissemination round or a subtree has heard from are one or
/// two intervals, so sets stay small at any p.
using RankSet = llvm::SmallVector<std::pair<uint32_t, uint32_t>, 2>;

void unite(RankSet &into, const RankSet &other) {
  if (other.empty())
    return;
  RankSet merged;
  merged.reserve(into.size() + other.size());
  size_t i = 0, j = 0;
  while (i < into.size() || j < other.size()) {
    const auto &next =
        j == other.size() || (i < into.size() && into[i].first <= other[j].first) ? into[i++]
                                                                                  : other[j++];
    if (!merged.empty() && next.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, next.second);
    else
      merged.push_back(next);
  }
  into = std::move(merged);
}

/// The first rank of 0..p-1 missing from `s`, and how many are missing.
std::pair<uint32_t, uint64_t> firstMissing(const RankSet &s, uint32_t p) {
  uint32_t first = p;
  uint64_t missing = 0, at = 0;
  for (const auto &[lo, hi] : s) {
    if (lo > at && first == p)
      first = uint32_t(at);
    missing += lo - at;
    at = hi;
  }
  if (at < p && first == p)
    first = uint32_t(at);
  missing += p - at;
  return {first, missing};
}

} // namespace

void Verifier::checkSynchronized() {
  if (shape_.collective != ir::Collective::Barrier)
    return;
  const uint32_t p = shape_.ranks;
  const size_t n = sim_.size();
  // A stuck op is a deadlock, reported already; without every op done the
  // times do not order the ops.
  for (const SimOp &so : sim_)
    if (so.state != 2)
      return;
  // Causal order: an op completes strictly after its dependencies, and a
  // matched pair completes at one time strictly after both were posted; so
  // by time, sends before receives at equal times, every op comes after
  // everything its set is made of.
  std::vector<uint32_t> order(n);
  for (uint32_t g = 0; g < n; ++g)
    order[g] = g;
  // (A barrier does not reduce, so its receives are plain recvs.)
  auto isRecv = [&](uint32_t g) { return opOf(g).kind == ir::OpKind::Recv; };
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (sim_[a].time != sim_[b].time)
      return sim_[a].time < sim_[b].time;
    return !isRecv(a) && isRecv(b);
  });
  std::vector<RankSet> heard(n);
  for (uint32_t g : order) {
    const uint32_t r = rankOf(g);
    RankSet set{{r, r + 1}};
    for (uint32_t pr : graphs_[r].preds(indexOf(g)))
      unite(set, heard[gid(r, pr)]);
    if (isRecv(g) && sim_[g].partner != noOp)
      unite(set, heard[sim_[g].partner]);
    heard[g] = std::move(set);
  }
  for (uint32_t r = 0; r < p && diags_.wants(); ++r) {
    RankSet all{{r, r + 1}};
    for (uint32_t g = base_[r]; g < base_[r + 1]; ++g)
      unite(all, heard[g]);
    auto [j, missing] = firstMissing(all, p);
    if (missing == 0)
      continue;
    const auto &ops = plan_.programs[r].ops;
    Diagnostic d;
    if (ops.empty()) {
      d.cls = DiagClass::Unsynchronized;
      d.rank = r;
    } else {
      d = opDiag(DiagClass::Unsynchronized, gid(r, uint32_t(ops.size() - 1)));
    }
    d.message = llvm::formatv("rank {0} may leave the barrier before rank {1} enters it: no "
                              "op of rank {0} waits, through messages and dependencies, on "
                              "an op of rank {1}",
                              r, j)
                    .str();
    if (missing > 1)
      d.message += llvm::formatv(" ({0} ranks unheard from in all)", missing).str();
    diags_.add(std::move(d));
  }
}

} // namespace collc::compiler::detail
