// ir/PlanBuilder.h: the API generators write plans with, in chunk terms.
#ifndef COLLC_IR_PLANBUILDER_H
#define COLLC_IR_PLANBUILDER_H

#include "ir/Plan.h"

namespace collc::ir {

/// Thrown by PlanBuilder when a plan would grow past its op limit; whoever
/// runs a generator turns it into an error (sched::generate does).
struct PlanTooLarge {
  uint64_t limit; ///< the limit the plan exceeded
};

/// Builds a plan op by op. By default ops are barrier-style: each op gets the
/// builder's current step (`step()`), so it depends on every op of its rank's
/// nearest lower step. `setAfter` replaces an op's dependencies by an exact list.
/// `take()` raises the shape's `scratch` to the highest tmp slot used.
class PlanBuilder {
public:
  /// Precondition: checkShape(shape) holds. Adding op number maxOps + 1 (over
  /// all ranks) throws PlanTooLarge, so a plan too large to hold is refused
  /// early instead of exhausting memory.
  PlanBuilder(const Shape &shape, llvm::StringRef algorithm, uint64_t maxOps = UINT64_MAX);

  const Shape &shape() const { return plan_.shape; }
  uint32_t ranks() const { return plan_.shape.ranks; }
  uint32_t chunks() const { return plan_.shape.chunks; }

  /// The step that ops added from now on are given.
  uint32_t step() const { return step_; }
  void setStep(uint32_t s) { step_ = s; }
  void nextStep() { ++step_; }

  /// Each returns the new op's index in `rank`'s program.
  uint32_t send(uint32_t rank, uint32_t to, Slots from);
  uint32_t recv(uint32_t rank, uint32_t from, Slots into);
  /// into = recv ∘ into (OtherFirst) or into ∘ recv (BufFirst).
  uint32_t recvReduce(uint32_t rank, uint32_t from, Slots into, Order order);
  /// into = src ∘ into (OtherFirst) or into ∘ src (BufFirst).
  uint32_t reduce(uint32_t rank, Slots into, Slots src, Order order);
  uint32_t copy(uint32_t rank, Slots into, Slots src);

  /// Three-address forms: dst = recv ∘ operand / src ∘ operand (OtherFirst)
  /// or operand ∘ recv / operand ∘ src (BufFirst); `operand` is only read.
  uint32_t recvReduceInto(uint32_t rank, uint32_t from, Slots operand, Slots dst, Order order);
  uint32_t reduceInto(uint32_t rank, Slots operand, Slots src, Slots dst, Order order);

  /// Makes op `index` of `rank` depend on exactly `deps` (each < index).
  void setAfter(uint32_t rank, uint32_t index, llvm::ArrayRef<uint32_t> deps);
  /// Number of ops `rank` has so far.
  uint32_t size(uint32_t rank) const {
    return static_cast<uint32_t>(plan_.programs[rank].ops.size());
  }

  Plan take();

private:
  uint32_t add(uint32_t rank, Op op);

  Plan plan_;
  uint64_t ops_ = 0, maxOps_;
  uint32_t step_ = 0;
  uint32_t scratchUsed_ = 0;
};

/// Operand order that keeps canonical rank order when the local value covers
/// ranks below (`localIsLower`) or above the other operand's.
inline Order orderFor(bool localIsLower) {
  return localIsLower ? Order::BufFirst : Order::OtherFirst;
}

} // namespace collc::ir

#endif // COLLC_IR_PLANBUILDER_H
