// tests/oracle/ReduceBinomial.cpp: the order-preserving binomial-tree reduce.
//
// The binomial algorithm works as follows. The reduction runs towards rank 0
// in rounds mask = 1, 2, 4, ...: a rank whose lowest set bit is `mask` sends
// its accumulated value, which covers ranks [rank, rank + mask), to
// rank - mask and is done; a rank with none of the bits up to `mask` set
// combines the value of rank + mask (if that rank exists) behind its own
// (buf = buf ∘ recv). Every value is a contiguous rank interval and each
// combination joins it with the adjacent interval above, so the result is
// canonical: the plan is correct for operations that are only associative.
// If the root is not rank 0, rank 0 finally sends the result to the root,
// which receives it into out. The root accumulates in out, every other rank
// in tmp (it has no out buffer).
//
// Cost: ceil(lg p)(α + nβ + nγ), plus α + nβ when the root is not rank 0.
#include "tests/oracle/Oracle.h"

#include "ir/PlanBuilder.h"

namespace collc::oracle {

ir::Plan buildReduceBinomial(const GenOptions &o) {
  const uint32_t p = o.ranks, root = o.root;
  ir::Shape shape;
  shape.collective = ir::Collective::Reduce;
  shape.ranks = p;
  shape.root = root;
  shape.chunks = 1;
  shape.commutative = false;
  shape.inPlace = true;
  ir::PlanBuilder b(shape, "binomial", o.maxOps);
  auto acc = [root](uint32_t rank) {
    return ir::Slots{rank == root ? ir::Buffer::Out : ir::Buffer::Tmp, 0, 1};
  };
  // A rank takes part in round `mask` while none of its bits below it is set.
  auto activeIn = [](uint32_t rank, uint32_t mask) { return rank % mask == 0; };

  for (uint32_t r = 0; r < p; ++r)
    b.copy(r, acc(r), ir::in(0));
  for (uint32_t mask = 1; mask < p; mask <<= 1) {
    b.nextStep();
    for (uint32_t r = 0; r < p; ++r) {
      if (!activeIn(r, mask))
        continue;
      if (r & mask)
        b.send(r, r - mask, acc(r));
      else if (r + mask < p)
        b.recvReduce(r, r + mask, acc(r), ir::orderFor(/*localIsLower=*/true));
    }
  }
  if (root != 0) {
    b.nextStep();
    b.send(0, root, acc(0));
    b.recv(root, 0, ir::out(0));
  }
  return b.take();
}

} // namespace collc::oracle
