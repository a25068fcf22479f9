// tests/oracle/ReduceBinaryTree.cpp: the order-preserving binary-tree reduce.
//
// The binary-tree algorithm works as follows. For root 0 the ranks form the
// pre-order binary tree over [0, p) (see AllreduceBinaryTree.cpp): the node
// for [lo, hi) is rank lo, its left child covers [lo+1, lo+1+L) with
// L = ceil((hi-lo-1)/2), its right child the rest, and each node combines
// x[lo] ∘ left ∘ right as the values arrive (left first, one step before the
// right). For another root r the tree is re-rooted without breaking rank
// order: r's left child is rank 0, the root of the pre-order tree over
// [0, r), and its right child is rank r+1, the root of the pre-order tree
// over [r+1, p); r combines left ∘ x[r] ∘ right (recv_first from the left
// child, buf_first from the right), taking the child whose subtree finishes
// first first. Every value is a contiguous rank interval combined with its
// neighbour in order, so the plan is correct for operations that are only
// associative. The root accumulates in out, every other rank in tmp.
//
// Cost: about 2 floor(lg p)(α + nβ + nγ) — two receives per tree level, each
// a whole vector; half the ranks idle at every level, so it suits short
// vectors.
#include "tests/oracle/Oracle.h"
#include "tests/oracle/Patterns.h"

#include "ir/PlanBuilder.h"

#include <algorithm>

namespace collc::oracle {

ir::Plan buildReduceBinaryTree(const GenOptions &o) {
  const uint32_t p = o.ranks, root = o.root;
  ir::Shape shape;
  shape.collective = ir::Collective::Reduce;
  shape.ranks = p;
  shape.root = root;
  shape.chunks = 1;
  shape.commutative = false;
  shape.inPlace = true;
  ir::PlanBuilder b(shape, "binary_tree", o.maxOps);
  auto acc = [root](uint32_t rank) { return rank == root ? ir::Buffer::Out : ir::Buffer::Tmp; };

  for (uint32_t r = 0; r < p; ++r)
    b.copy(r, {acc(r), 0, 1}, ir::in(0));
  if (p == 1)
    return b.take();
  if (root == 0) {
    preorderReduce(b, RankInterval{0, p}, /*parent=*/std::nullopt, preorderReadyStep(p), acc);
    return b.take();
  }

  // Re-rooted tree: [0, root) below-left of the root, [root+1, p) below-right.
  const RankInterval below{0, root}, above{root + 1, p};
  const ir::Slots result = ir::out(0);
  const uint32_t belowReady = preorderReadyStep(below.size());
  if (above.empty()) {
    preorderReduce(b, below, root, belowReady, acc);
    b.setStep(belowReady);
    b.recvReduce(root, below.lo, result, ir::orderFor(/*localIsLower=*/false));
    return b.take();
  }
  const uint32_t aboveReady = preorderReadyStep(above.size());
  // The child that is ready first is taken first; the other one step later.
  const bool belowFirst = belowReady <= aboveReady;
  const uint32_t belowStep = belowFirst ? belowReady : std::max(belowReady, aboveReady + 1);
  const uint32_t aboveStep = belowFirst ? std::max(aboveReady, belowReady + 1) : aboveReady;
  preorderReduce(b, below, root, belowStep, acc);
  preorderReduce(b, above, root, aboveStep, acc);
  auto takeBelow = [&] {
    b.setStep(belowStep);
    b.recvReduce(root, below.lo, result, ir::orderFor(/*localIsLower=*/false));
  };
  auto takeAbove = [&] {
    b.setStep(aboveStep);
    b.recvReduce(root, above.lo, result, ir::orderFor(/*localIsLower=*/true));
  };
  if (belowFirst) {
    takeBelow();
    takeAbove();
  } else {
    takeAbove();
    takeBelow();
  }
  return b.take();
}

} // namespace collc::oracle
