// tests/oracle/AllreduceBinaryTree.cpp: the order-preserving binary-tree allreduce.
//
// The binary-tree algorithm works as follows. The ranks form a pre-order
// binary tree over [0, p): the node for the interval [lo, hi) is rank lo, its
// left child is the node for [lo+1, lo+1+L) with L = ceil((hi-lo-1)/2), its
// right child the node for the rest. Every subtree covers a contiguous rank
// interval whose lowest rank is its root, so a node that combines x[lo], then
// its left child's value, then its right child's (buf = buf ∘ recv each time)
// holds its interval's reduction in canonical rank order: the plan is correct
// for operations that are only associative. The reduction travels up to rank
// 0, which then broadcasts the result down the same tree. A node takes its
// two children one step apart (both would write out[0]); the right child,
// whose subtree is never the larger, waits for its turn. Every rank receives
// the one value rank 0 computed, so all results are bitwise identical.
//
// Cost, with h = floor(lg p) the tree height: about 2h(α + nβ + nγ) for the
// reduction (two receives per level) plus h(α + 2nβ) for the broadcast (two
// sends per level). Only rank 0 ever holds the full result before the
// broadcast and half the ranks idle at every level, so it suits short vectors.
#include "tests/oracle/Oracle.h"
#include "tests/oracle/Patterns.h"

#include "ir/PlanBuilder.h"

namespace collc::oracle {

ir::Plan buildAllreduceBinaryTree(const GenOptions &o) {
  const uint32_t p = o.ranks;
  ir::Shape shape;
  shape.collective = ir::Collective::Allreduce;
  shape.ranks = p;
  shape.chunks = 1;
  shape.commutative = false;
  shape.inPlace = true;
  ir::PlanBuilder b(shape, "binary_tree", o.maxOps);
  auto accInOut = [](uint32_t) { return ir::Buffer::Out; };

  for (uint32_t r = 0; r < p; ++r)
    b.copy(r, ir::out(0), ir::in(0));
  if (p == 1)
    return b.take();
  const RankInterval all{0, p};
  const uint32_t bcastStep = preorderReadyStep(p);
  preorderReduce(b, all, /*parent=*/std::nullopt, bcastStep, accInOut);
  preorderBcast(b, all, bcastStep);
  return b.take();
}

} // namespace collc::oracle
