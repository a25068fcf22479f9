// tests/oracle/Patterns.h: communication patterns several generators share.
//
// This header holds more than one class on purpose: the even/odd fold to a
// power of two, recursive halving and doubling over a group of ranks, and the
// order-preserving pre-order binary tree are each used by two or three
// generators, and reading them side by side is how their step numbering
// (every helper takes the step its first ops go into) is kept consistent.
// Every helper emits barrier-style ops (ir::PlanBuilder steps) whose sends
// and receives pair up within one step, so a plan assembled from them is
// deadlock-free with unbuffered sends.
#ifndef COLLC_TESTS_ORACLE_PATTERNS_H
#define COLLC_TESTS_ORACLE_PATTERNS_H

#include "ir/PlanBuilder.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <vector>

namespace collc::oracle {

/// A range of consecutive vector chunks [begin, begin + size).
struct ChunkRange {
  uint32_t begin = 0;
  uint32_t size = 0;

  uint32_t end() const { return begin + size; }
  bool operator==(const ChunkRange &) const = default;
};

/// The slots of `buf` that hold `range`.
inline ir::Slots slotsOf(ir::Buffer buf, ChunkRange range) {
  return {buf, range.begin, range.size};
}

/// The union of two adjacent ranges. Precondition: a.end() == b.begin or
/// b.end() == a.begin.
ChunkRange joinAdjacent(ChunkRange a, ChunkRange b);

/// The buffer that accumulates a rank's vector: `out`, or `tmp` on a rank
/// that has no out buffer (reduce).
using AccBufferFn = llvm::function_ref<ir::Buffer(uint32_t rank)>;

/// log2 of a power of two.
uint32_t log2Exact(uint32_t powerOfTwo);
/// Distances 1, 2, 4, ..., n/2 (n a power of two; empty for n = 1).
std::vector<uint32_t> ascendingDistances(uint32_t n);
/// Distances n/2, ..., 2, 1 (n a power of two; empty for n = 1).
std::vector<uint32_t> descendingDistances(uint32_t n);

// --- the even/odd fold to a power of two (MPICH, Open MPI) --------------------

/// Folds p ranks onto p' = 2^floor(lg p): with r = p - p', each even rank
/// below 2r hands its vector to rank+1 and sits out; the other p' ranks are
/// renumbered 0..p'-1 ("newrank") in rank order, so a contiguous newrank
/// interval always covers a contiguous rank interval.
class PowerOfTwoFold {
public:
  explicit PowerOfTwoFold(uint32_t ranks);

  uint32_t ranks() const { return ranks_; }
  /// p' = 2^floor(lg p).
  uint32_t pof2() const { return pof2_; }
  /// r = p - p': the number of ranks that sit out.
  uint32_t extra() const { return ranks_ - pof2_; }

  /// True for the even ranks below 2r.
  bool sitsOut(uint32_t rank) const { return rank < 2 * extra() && rank % 2 == 0; }
  /// The newrank of a rank that does not sit out: rank/2 below 2r, else rank-r.
  uint32_t newRank(uint32_t rank) const;
  /// The rank with newrank `nr`: 2nr+1 below r, else nr+r.
  uint32_t rankOf(uint32_t nr) const;
  /// The ranks that take part, indexed by newrank.
  std::vector<uint32_t> group() const;

private:
  uint32_t ranks_;
  uint32_t pof2_;
};

/// In step `step`: each even rank 2i < 2r sends acc[0..C) to 2i+1, which
/// combines it in front of its own (the sender holds the lower rank).
/// Emits nothing when r = 0.
void foldIn(ir::PlanBuilder &b, const PowerOfTwoFold &fold, uint32_t step, AccBufferFn acc);

/// In step `step`: each odd rank 2i+1 < 2r sends out[0..C) to 2i, which
/// receives it into its out. Emits nothing when r = 0.
void foldOut(ir::PlanBuilder &b, const PowerOfTwoFold &fold, uint32_t step);

// --- recursive halving and doubling over a group ---------------------------------

/// Recursive-halving reduce-scatter of chunks [0, chunks) among `group`
/// (index i is rank group[i]; a power-of-two count), one step per distance,
/// distance k in step firstStep + k. At distance d, indices i and i^d share a
/// range; the lower index keeps its lower half and sends the upper half, the
/// higher index the other way round, and each combines the half it receives
/// into acc with recv_reduce, the lower index's operand first. Returns the
/// range each index ends up owning. Precondition: every range is split evenly
/// (chunks divisible by 2^distances.size()).
std::vector<ChunkRange> halvingReduceScatter(ir::PlanBuilder &b, llvm::ArrayRef<uint32_t> group,
                                             llvm::ArrayRef<uint32_t> distances,
                                             uint32_t chunks, uint32_t firstStep,
                                             AccBufferFn acc);

/// Recursive-doubling allgather among `group`, distance k in step
/// firstStep + k: at distance d, indices i and i^d send each other their
/// ranges (adjacent by precondition, as after halvingReduceScatter with the
/// reverse distances) and both keep the union. Updates `ranges`.
void doublingAllgather(ir::PlanBuilder &b, llvm::ArrayRef<uint32_t> group,
                       llvm::ArrayRef<uint32_t> distances, std::vector<ChunkRange> &ranges,
                       uint32_t firstStep, ir::Buffer buf);

// --- the order-preserving pre-order binary tree --------------------------------------

/// Ranks [lo, hi), the subtree rooted at rank lo.
struct RankInterval {
  uint32_t lo = 0;
  uint32_t hi = 0;

  uint32_t size() const { return hi - lo; }
  bool empty() const { return hi <= lo; }
};

/// The children of the pre-order node for `t` (non-empty): the left child
/// covers [lo+1, lo+1+L) with L = ceil((size-1)/2), the right child the rest.
struct PreorderChildren {
  std::optional<RankInterval> left, right;
};
PreorderChildren preorderChildren(RankInterval t);

/// The earliest step in which the root of a pre-order tree over n >= 1 ranks
/// can send its subtree's value on, when every rank's value is ready after
/// step 0 and a node takes its left child's value one step before its right
/// child's.
uint32_t preorderReadyStep(uint32_t n);

/// Reduce up the pre-order tree over `t`: every node lo receives its left
/// child's value and then its right child's into acc(lo)[0] (recv_reduce,
/// buf_first), so it holds x[lo] ∘ left ∘ right in rank order; if `parent` is
/// given, lo then sends the value to it in step `sendStep`. Children are
/// scheduled as late as `sendStep` allows. Precondition:
/// sendStep >= preorderReadyStep(t.size()); acc(rank)[0] holds x[rank] after
/// step 0.
void preorderReduce(ir::PlanBuilder &b, RankInterval t, std::optional<uint32_t> parent,
                    uint32_t sendStep, AccBufferFn acc);

/// Broadcast down the pre-order tree over `t`: rank t.lo sends out[0] to its
/// children in step `firstStep`, each child receives it into out[0] and
/// forwards it one step later.
void preorderBcast(ir::PlanBuilder &b, RankInterval t, uint32_t firstStep);

} // namespace collc::oracle

#endif // COLLC_TESTS_ORACLE_PATTERNS_H
