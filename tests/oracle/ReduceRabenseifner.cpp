// tests/oracle/ReduceRabenseifner.cpp: Rabenseifner's reduce (MPICH's reduce_scatter_gather).
//
// Rabenseifner's reduce works as follows. With p' = 2^floor(lg p) and
// r = p - p', the vector is cut into p' chunks. The ranks fold onto p' as in
// the allreduce (AllreduceRabenseifner.cpp): each even rank below 2r sends
// its vector to rank+1, which combines it, and sits out; the rest are
// renumbered newrank = rank/2 (odd ranks below 2r) or rank - r. The same
// recursive-halving reduce-scatter (distances 1, 2, ..., p'/2) leaves every
// newrank owning the complete reduction of one chunk. A binomial gather then
// collects the owned ranges at the gathering newrank g, with the distances in
// reverse order: at distance d = p'/2, ..., 1 every newrank i still holding
// data with (i ^ g) < 2d either sends its range to i ^ d (if bit d of i ^ g is
// set) or receives that partner's adjacent range and keeps the union. g is
// the root's newrank; a root that sat out (an even rank below 2r) is served
// by its partner root+1, which gathers the result and sends it to the root in
// one extra step. The root works in out, every other rank in tmp (it has no
// out buffer). Each chunk is reduced once, at its owner.
//
// Cost for a power of two: 2 lg p α + 2((p-1)/p)nβ + ((p-1)/p)nγ — the
// gather moves as much data as the allgather of the allreduce, but only
// towards the root. Otherwise the fold adds α + nβ + nγ, and a root that sat
// out α + nβ more. Its combinations are canonical as in the allreduce, so the
// plan is correct for any associative operation (proven by the tests for
// every p they sweep, all roots; MPICH declares it for commutative ones).
#include "tests/oracle/Oracle.h"
#include "tests/oracle/Patterns.h"

#include "ir/PlanBuilder.h"

namespace collc::oracle {

ir::Plan buildReduceRabenseifner(const GenOptions &o) {
  const uint32_t p = o.ranks, root = o.root;
  const PowerOfTwoFold fold(p);
  const uint32_t C = fold.pof2();
  ir::Shape shape;
  shape.collective = ir::Collective::Reduce;
  shape.ranks = p;
  shape.root = root;
  shape.chunks = C;
  shape.commutative = false;
  shape.inPlace = true;
  ir::PlanBuilder b(shape, "rabenseifner", o.maxOps);
  auto acc = [root](uint32_t rank) { return rank == root ? ir::Buffer::Out : ir::Buffer::Tmp; };

  for (uint32_t r = 0; r < p; ++r)
    b.copy(r, {acc(r), 0, C}, ir::in(0, C));
  if (p == 1)
    return b.take();
  uint32_t step = 1;
  if (fold.extra() > 0)
    foldIn(b, fold, step++, acc);
  const std::vector<uint32_t> group = fold.group();
  const std::vector<uint32_t> halving = ascendingDistances(C);
  std::vector<ChunkRange> owned = halvingReduceScatter(b, group, halving, C, step, acc);
  step += static_cast<uint32_t>(halving.size());

  // Binomial gather to newrank `gather`, the root's or its partner's.
  const uint32_t gatherRank = fold.sitsOut(root) ? root + 1 : root;
  const uint32_t gather = fold.newRank(gatherRank);
  auto relative = [gather](uint32_t nr) { return nr ^ gather; };
  for (uint32_t d : descendingDistances(C)) {
    b.setStep(step++);
    for (uint32_t nr = 0; nr < C; ++nr) {
      if (relative(nr) >= 2 * d)
        continue; // already sent its range
      const uint32_t rank = group[nr], partner = group[nr ^ d];
      if (relative(nr) & d) {
        b.send(rank, partner, slotsOf(acc(rank), owned[nr]));
      } else {
        b.recv(rank, partner, slotsOf(acc(rank), owned[nr ^ d]));
        owned[nr] = joinAdjacent(owned[nr], owned[nr ^ d]);
      }
    }
  }
  if (gatherRank != root) {
    b.setStep(step);
    b.send(gatherRank, root, slotsOf(acc(gatherRank), {0, C}));
    b.recv(root, gatherRank, ir::out(0, C));
  }
  return b.take();
}

} // namespace collc::oracle
