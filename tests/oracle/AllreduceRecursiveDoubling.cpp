// tests/oracle/AllreduceRecursiveDoubling.cpp: the recursive-doubling allreduce.
//
// The recursive-doubling algorithm works as follows. With p' = 2^floor(lg p)
// and r = p - p', the ranks first fold onto p' (as MPICH and Open MPI do):
// each even rank below 2r sends its vector to rank+1, which combines it in
// front of its own, and sits out; the remaining ranks are renumbered
// newrank = rank/2 (odd ranks below 2r) or rank - r (the rest), in rank order.
// Then, for mask = 1, 2, ..., p'/2, every newrank exchanges its whole vector
// with newrank ^ mask: it sends out, receives the partner's into tmp, and
// combines the two. Before the round with mask m a newrank holds the
// reduction of its aligned block of m newranks, which covers a contiguous
// rank interval, and its partner holds the adjacent block; both compute
// lower ∘ upper (the lower newrank with buf_first, the higher with
// src_first), so the combination is canonical — the plan is correct for
// operations that are only associative — and both partners build the same
// reduction tree, which makes all final results bitwise identical. Finally
// each odd rank below 2r sends the result to the even rank that sat out.
//
// Cost: lg p'(α + nβ + nγ) for a power of two; the fold adds 2(α + nβ) + nγ
// when p is not one. Every message carries the whole vector, so it suits very
// short vectors, where latency dominates.
#include "tests/oracle/Oracle.h"
#include "tests/oracle/Patterns.h"

#include "ir/PlanBuilder.h"

namespace collc::oracle {

ir::Plan buildAllreduceRecursiveDoubling(const GenOptions &o) {
  const uint32_t p = o.ranks;
  ir::Shape shape;
  shape.collective = ir::Collective::Allreduce;
  shape.ranks = p;
  shape.chunks = 1;
  shape.scratch = 1;
  shape.commutative = false;
  shape.inPlace = true;
  ir::PlanBuilder b(shape, "recursive_doubling", o.maxOps);
  const PowerOfTwoFold fold(p);
  auto accInOut = [](uint32_t) { return ir::Buffer::Out; };

  for (uint32_t r = 0; r < p; ++r)
    b.copy(r, ir::out(0), ir::in(0));
  uint32_t step = 1;
  if (fold.extra() > 0)
    foldIn(b, fold, step++, accInOut);
  for (uint32_t mask = 1; mask < fold.pof2(); mask <<= 1, step += 2) {
    for (uint32_t nr = 0; nr < fold.pof2(); ++nr) {
      const uint32_t rank = fold.rankOf(nr), partner = fold.rankOf(nr ^ mask);
      b.setStep(step);
      b.send(rank, partner, ir::out(0));
      b.recv(rank, partner, ir::tmp(0));
      b.setStep(step + 1);
      b.reduce(rank, ir::out(0), ir::tmp(0), ir::orderFor(/*localIsLower=*/nr < (nr ^ mask)));
    }
  }
  if (fold.extra() > 0)
    foldOut(b, fold, step);
  return b.take();
}

} // namespace collc::oracle
