// tests/support/FamilyPlans.cpp: the plans of FamilyPlans.h.
#include "tests/support/FamilyPlans.h"

#include "ir/PlanBuilder.h"

namespace collc::testplans {

namespace {
ir::Shape shapeOf(ir::Collective c, uint32_t p, uint32_t chunks, uint32_t root = 0) {
  ir::Shape s;
  s.collective = c;
  s.ranks = p;
  s.root = root;
  s.chunks = chunks;
  return s;
}
} // namespace

ir::Plan ringReduceScatter(uint32_t p) {
  ir::Shape shape = shapeOf(ir::Collective::ReduceScatterBlock, p, p);
  shape.commutative = true;
  ir::PlanBuilder b(shape, "ring");
  auto mod = [p](int64_t x) { return uint32_t(((x % p) + p) % p); };
  if (p == 1) {
    b.copy(0, ir::out(0), ir::in(0));
    return b.take();
  }
  for (uint32_t s = 0; s + 1 < p; ++s) {
    for (uint32_t r = 0; r < p; ++r) {
      const uint32_t sent = mod(int64_t(r) - s - 1), got = mod(int64_t(r) - s - 2);
      b.send(r, mod(r + 1), s == 0 ? ir::in(sent) : ir::tmp(sent));
      b.recvReduceInto(r, mod(int64_t(r) - 1), ir::in(got), s + 2 == p ? ir::out(0) : ir::tmp(got),
                       ir::Order::OtherFirst);
    }
    b.nextStep();
  }
  return b.take();
}

ir::Plan chainScan(uint32_t p, bool exclusive) {
  ir::Shape shape = shapeOf(exclusive ? ir::Collective::Exscan : ir::Collective::Scan, p, 1);
  shape.commutative = false;
  ir::PlanBuilder b(shape, exclusive ? "chain_exscan" : "chain");
  for (uint32_t r = 0; r < p; ++r) {
    b.setStep(0);
    if (!exclusive) {
      b.copy(r, ir::out(0), ir::in(0));
      b.nextStep();
      if (r > 0)
        b.recvReduce(r, r - 1, ir::out(0), ir::Order::OtherFirst); // x[0..r-1] ∘ x[r]
      b.nextStep();
      if (r + 1 < p)
        b.send(r, r + 1, ir::out(0));
      continue;
    }
    if (r == 0) {
      if (p > 1)
        b.send(0, 1, ir::in(0));
      continue;
    }
    b.recv(r, r - 1, ir::out(0)); // x[0..r-1]
    b.nextStep();
    if (r + 1 < p) {
      b.reduceInto(r, ir::out(0), ir::in(0), ir::tmp(0), ir::Order::BufFirst); // ∘ x[r]
      b.nextStep();
      b.send(r, r + 1, ir::tmp(0));
    }
  }
  return b.take();
}

ir::Plan ringAllgather(uint32_t p) {
  ir::Shape shape = shapeOf(ir::Collective::Allgather, p, p);
  shape.inPlace = true;
  ir::PlanBuilder b(shape, "ring");
  auto mod = [p](int64_t x) { return uint32_t(((x % p) + p) % p); };
  for (uint32_t r = 0; r < p; ++r)
    b.copy(r, ir::out(r), ir::in(0));
  for (uint32_t s = 1; s < p; ++s) {
    b.nextStep();
    for (uint32_t r = 0; r < p; ++r) {
      b.send(r, mod(r + 1), ir::out(mod(int64_t(r) - s + 1)));
      b.recv(r, mod(int64_t(r) - 1), ir::out(mod(int64_t(r) - s)));
    }
  }
  return b.take();
}

ir::Plan binomialBcast(uint32_t p, uint32_t root) {
  ir::PlanBuilder b(shapeOf(ir::Collective::Bcast, p, 1, root), "binomial");
  uint32_t top = 1;
  while (top < p)
    top *= 2;
  for (uint32_t mask = top / 2; mask >= 1; mask /= 2) {
    for (uint32_t v = 0; v < p; ++v) {
      const uint32_t r = (v + root) % p;
      if (v % (2 * mask) == 0 && v + mask < p)
        b.send(r, (v + mask + root) % p, ir::out(0));
      else if (v % (2 * mask) == mask)
        b.recv(r, (v - mask + root) % p, ir::out(0));
    }
    b.nextStep();
  }
  return b.take();
}

} // namespace collc::testplans
