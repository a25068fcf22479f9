// tests/oracle/AllreduceRabenseifner.cpp: Rabenseifner's allreduce (MPICH's).
//
// Rabenseifner's algorithm works as follows (as MPICH's allreduce does it).
// With p' = 2^floor(lg p) and r = p - p', the vector is cut into
// p' chunks. The ranks fold onto p': each even rank below 2r sends its vector
// to rank+1, which combines it, and sits out; the others are renumbered
// newrank = rank/2 (odd ranks below 2r) or rank - r. A recursive-halving
// reduce-scatter follows, beginning with newranks at distance 1: at distance
// d = 1, 2, ..., p'/2 newranks i and i^d share a chunk range; the lower keeps
// the lower half and sends the upper half, the higher the reverse, and each
// combines the half it receives into its out (recv_reduce). Afterwards every
// newrank owns the complete reduction of one chunk (newrank i owns chunk
// bitreverse(i)). A recursive-doubling allgather with the distances in
// reverse order (p'/2, ..., 1) exchanges the owned ranges until every newrank
// has the whole vector, and each odd rank below 2r finally sends it to the
// even rank that sat out. Every chunk is reduced once, at its owner, and then
// only copied, so all results are bitwise identical.
//
// Cost for a power of two: 2 lg p α + 2((p-1)/p)nβ + ((p-1)/p)nγ; otherwise
// (2 floor(lg p) + 2)α + (2(p'-1)/p' + 2)nβ + (1 + (p'-1)/p')nγ. The fold
// moves whole vectors, which is what binary blocks avoids.
//
// Every combination is canonical — each range is combined with the adjacent
// newrank block, lower block first, and the fold combines rank 2i with
// 2i+1 — so the plan is correct for any associative operation (MPICH
// declares it for commutative ones only). The verifier proves that for every
// p the tests sweep (GeneratorProperties), rather than this comment
// promising it.
#include "tests/oracle/Oracle.h"
#include "tests/oracle/Patterns.h"

#include "ir/PlanBuilder.h"

namespace collc::oracle {

ir::Plan buildAllreduceRabenseifner(const GenOptions &o) {
  const uint32_t p = o.ranks;
  const PowerOfTwoFold fold(p);
  const uint32_t C = fold.pof2();
  ir::Shape shape;
  shape.collective = ir::Collective::Allreduce;
  shape.ranks = p;
  shape.chunks = C;
  shape.commutative = false;
  shape.inPlace = true;
  ir::PlanBuilder b(shape, "rabenseifner", o.maxOps);
  auto accInOut = [](uint32_t) { return ir::Buffer::Out; };

  for (uint32_t r = 0; r < p; ++r)
    b.copy(r, ir::out(0, C), ir::in(0, C));
  uint32_t step = 1;
  if (fold.extra() > 0)
    foldIn(b, fold, step++, accInOut);
  const std::vector<uint32_t> group = fold.group();
  const std::vector<uint32_t> halving = ascendingDistances(C);
  const std::vector<uint32_t> doubling = descendingDistances(C);
  std::vector<ChunkRange> owned = halvingReduceScatter(b, group, halving, C, step, accInOut);
  step += static_cast<uint32_t>(halving.size());
  doublingAllgather(b, group, doubling, owned, step, ir::Buffer::Out);
  step += static_cast<uint32_t>(doubling.size());
  if (fold.extra() > 0)
    foldOut(b, fold, step);
  return b.take();
}

} // namespace collc::oracle
