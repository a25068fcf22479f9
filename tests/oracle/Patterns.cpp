// tests/oracle/Patterns.cpp: the shared fold, halving/doubling and tree patterns.
#include "tests/oracle/Patterns.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cassert>

namespace collc::oracle {

ChunkRange joinAdjacent(ChunkRange a, ChunkRange b) {
  assert((a.end() == b.begin || b.end() == a.begin) && "ranges are not adjacent");
  return {std::min(a.begin, b.begin), a.size + b.size};
}

uint32_t log2Exact(uint32_t powerOfTwo) {
  assert(llvm::isPowerOf2_32(powerOfTwo) && "not a power of two");
  return llvm::Log2_32(powerOfTwo);
}

std::vector<uint32_t> ascendingDistances(uint32_t n) {
  assert(llvm::isPowerOf2_32(n) && "group size must be a power of two");
  std::vector<uint32_t> d;
  for (uint32_t m = 1; m < n; m <<= 1)
    d.push_back(m);
  return d;
}

std::vector<uint32_t> descendingDistances(uint32_t n) {
  std::vector<uint32_t> d = ascendingDistances(n);
  std::reverse(d.begin(), d.end());
  return d;
}

// --- fold -----------------------------------------------------------------------

PowerOfTwoFold::PowerOfTwoFold(uint32_t ranks)
    : ranks_(ranks), pof2_(uint32_t(1) << llvm::Log2_32(ranks)) {
  assert(ranks >= 1 && "no ranks");
}

uint32_t PowerOfTwoFold::newRank(uint32_t rank) const {
  assert(!sitsOut(rank) && "rank sits out of the power-of-two group");
  return rank < 2 * extra() ? rank / 2 : rank - extra();
}

uint32_t PowerOfTwoFold::rankOf(uint32_t nr) const {
  assert(nr < pof2_ && "newrank out of range");
  return nr < extra() ? 2 * nr + 1 : nr + extra();
}

std::vector<uint32_t> PowerOfTwoFold::group() const {
  std::vector<uint32_t> g(pof2_);
  for (uint32_t nr = 0; nr < pof2_; ++nr)
    g[nr] = rankOf(nr);
  return g;
}

void foldIn(ir::PlanBuilder &b, const PowerOfTwoFold &fold, uint32_t step, AccBufferFn acc) {
  const uint32_t C = b.chunks();
  b.setStep(step);
  for (uint32_t even = 0; even < 2 * fold.extra(); even += 2) {
    b.send(even, even + 1, {acc(even), 0, C});
    b.recvReduce(even + 1, even, {acc(even + 1), 0, C}, ir::orderFor(/*localIsLower=*/false));
  }
}

void foldOut(ir::PlanBuilder &b, const PowerOfTwoFold &fold, uint32_t step) {
  const uint32_t C = b.chunks();
  b.setStep(step);
  for (uint32_t even = 0; even < 2 * fold.extra(); even += 2) {
    b.send(even + 1, even, ir::out(0, C));
    b.recv(even, even + 1, ir::out(0, C));
  }
}

// --- halving and doubling ---------------------------------------------------------------

std::vector<ChunkRange> halvingReduceScatter(ir::PlanBuilder &b, llvm::ArrayRef<uint32_t> group,
                                             llvm::ArrayRef<uint32_t> distances,
                                             uint32_t chunks, uint32_t firstStep,
                                             AccBufferFn acc) {
  std::vector<ChunkRange> range(group.size(), ChunkRange{0, chunks});
  for (size_t k = 0; k < distances.size(); ++k) {
    const uint32_t d = distances[k];
    b.setStep(firstStep + static_cast<uint32_t>(k));
    for (uint32_t i = 0; i < group.size(); ++i) {
      const uint32_t partner = i ^ d;
      const bool lower = i < partner;
      const ChunkRange cur = range[i];
      assert(cur == range[partner] && cur.size % 2 == 0 && "partners must share an even range");
      const ChunkRange lowerHalf{cur.begin, cur.size / 2};
      const ChunkRange upperHalf{cur.begin + cur.size / 2, cur.size / 2};
      const ChunkRange keep = lower ? lowerHalf : upperHalf;
      const ChunkRange give = lower ? upperHalf : lowerHalf;
      const ir::Buffer buf = acc(group[i]);
      b.send(group[i], group[partner], slotsOf(buf, give));
      b.recvReduce(group[i], group[partner], slotsOf(buf, keep), ir::orderFor(lower));
    }
    // Both partners read the shared range above before either is narrowed.
    for (uint32_t i = 0; i < group.size(); ++i) {
      const ChunkRange cur = range[i];
      const bool lower = i < (i ^ d);
      range[i] = {lower ? cur.begin : cur.begin + cur.size / 2, cur.size / 2};
    }
  }
  return range;
}

void doublingAllgather(ir::PlanBuilder &b, llvm::ArrayRef<uint32_t> group,
                       llvm::ArrayRef<uint32_t> distances, std::vector<ChunkRange> &ranges,
                       uint32_t firstStep, ir::Buffer buf) {
  assert(ranges.size() == group.size() && "one range per group member");
  for (size_t k = 0; k < distances.size(); ++k) {
    const uint32_t d = distances[k];
    b.setStep(firstStep + static_cast<uint32_t>(k));
    for (uint32_t i = 0; i < group.size(); ++i) {
      const uint32_t partner = i ^ d;
      b.send(group[i], group[partner], slotsOf(buf, ranges[i]));
      b.recv(group[i], group[partner], slotsOf(buf, ranges[partner]));
    }
    std::vector<ChunkRange> joined(ranges.size());
    for (uint32_t i = 0; i < group.size(); ++i)
      joined[i] = joinAdjacent(ranges[i], ranges[i ^ d]);
    ranges = std::move(joined);
  }
}

// --- pre-order tree -------------------------------------------------------------------------

PreorderChildren preorderChildren(RankInterval t) {
  assert(!t.empty() && "empty tree");
  const uint32_t below = t.size() - 1;
  const uint32_t leftSize = (below + 1) / 2;
  PreorderChildren c;
  if (leftSize > 0)
    c.left = RankInterval{t.lo + 1, t.lo + 1 + leftSize};
  if (below > leftSize)
    c.right = RankInterval{t.lo + 1 + leftSize, t.hi};
  return c;
}

uint32_t preorderReadyStep(uint32_t n) {
  assert(n >= 1 && "empty tree");
  if (n == 1)
    return 1;
  const uint32_t leftSize = n / 2; // ceil((n-1)/2)
  const bool hasRight = n - 1 > leftSize;
  // The left child sends as soon as it can; the right child, never later
  // than the left (its subtree is no larger), waits one step behind it.
  return preorderReadyStep(leftSize) + (hasRight ? 2 : 1);
}

void preorderReduce(ir::PlanBuilder &b, RankInterval t, std::optional<uint32_t> parent,
                    uint32_t sendStep, AccBufferFn acc) {
  assert(sendStep >= preorderReadyStep(t.size()) && "tree cannot finish by sendStep");
  const PreorderChildren c = preorderChildren(t);
  const uint32_t rightStep = sendStep - 1;
  const uint32_t leftStep = c.right ? sendStep - 2 : sendStep - 1;
  if (c.left)
    preorderReduce(b, *c.left, t.lo, leftStep, acc);
  if (c.right)
    preorderReduce(b, *c.right, t.lo, rightStep, acc);
  const ir::Slots mine{acc(t.lo), 0, 1};
  if (c.left) {
    b.setStep(leftStep);
    b.recvReduce(t.lo, c.left->lo, mine, ir::orderFor(/*localIsLower=*/true));
  }
  if (c.right) {
    b.setStep(rightStep);
    b.recvReduce(t.lo, c.right->lo, mine, ir::orderFor(/*localIsLower=*/true));
  }
  if (parent) {
    b.setStep(sendStep);
    b.send(t.lo, *parent, mine);
  }
}

void preorderBcast(ir::PlanBuilder &b, RankInterval t, uint32_t firstStep) {
  const PreorderChildren c = preorderChildren(t);
  b.setStep(firstStep);
  for (const std::optional<RankInterval> &child : {c.left, c.right})
    if (child)
      b.send(t.lo, child->lo, ir::out(0));
  for (const std::optional<RankInterval> &child : {c.left, c.right}) {
    if (!child)
      continue;
    b.setStep(firstStep);
    b.recv(child->lo, t.lo, ir::out(0));
    preorderBcast(b, *child, firstStep + 1);
  }
}

} // namespace collc::oracle
