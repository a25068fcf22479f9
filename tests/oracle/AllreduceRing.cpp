// tests/oracle/AllreduceRing.cpp: the ring allreduce.
//
// The ring algorithm works as follows. The vector is cut into p chunks and the
// ranks form a ring, each sending to its right neighbour r+1 and receiving
// from its left neighbour r-1. In the reduce-scatter phase, at step s
// (s = 0..p-2) rank r sends its partial sum of chunk (r-s) mod p and combines
// the incoming partial sum of chunk (r-s-1) mod p into its own; after p-1 steps
// rank r holds the complete reduction of chunk (r+1) mod p. In the allgather
// phase the completed chunks travel p-1 more steps around the ring, each rank
// forwarding the chunk it completed or received last, overwriting its stale
// partial sums. Every chunk is reduced exactly once, at its owner, and then
// copied, so all ranks end with bitwise-identical results.
//
// Cost: 2(p-1)α + 2((p-1)/p)nβ + ((p-1)/p)nγ — bandwidth-optimal, but the
// latency term grows linearly in p, so it suits long vectors on few ranks.
// The partial sums wrap around the ring, so the rank order of the operands is
// not canonical: the plan needs a commutative operation.
#include "tests/oracle/Oracle.h"

#include "ir/PlanBuilder.h"

namespace collc::oracle {

ir::Plan buildAllreduceRing(const GenOptions &o) {
  const uint32_t p = o.ranks;
  ir::Shape shape;
  shape.collective = ir::Collective::Allreduce;
  shape.ranks = p;
  shape.chunks = p;
  shape.commutative = true;
  shape.inPlace = true;
  ir::PlanBuilder b(shape, "ring", o.maxOps);
  auto mod = [p](int64_t x) { return static_cast<uint32_t>(((x % p) + p) % p); };

  for (uint32_t r = 0; r < p; ++r)
    b.copy(r, ir::out(0, p), ir::in(0, p));
  for (uint32_t s = 0; s + 1 < p; ++s) { // reduce-scatter
    b.nextStep();
    for (uint32_t r = 0; r < p; ++r) {
      b.send(r, mod(r + 1), ir::out(mod(int64_t(r) - s)));
      b.recvReduce(r, mod(int64_t(r) - 1), ir::out(mod(int64_t(r) - s - 1)),
                   ir::Order::OtherFirst);
    }
  }
  for (uint32_t s = 0; s + 1 < p; ++s) { // allgather
    b.nextStep();
    for (uint32_t r = 0; r < p; ++r) {
      b.send(r, mod(r + 1), ir::out(mod(int64_t(r) + 1 - s)));
      b.recv(r, mod(int64_t(r) - 1), ir::out(mod(int64_t(r) - s)));
    }
  }
  return b.take();
}

} // namespace collc::oracle
