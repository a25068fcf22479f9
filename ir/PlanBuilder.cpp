// ir/PlanBuilder.cpp: op construction for generators.
#include "ir/PlanBuilder.h"

#include <algorithm>
#include <cassert>

namespace collc::ir {

PlanBuilder::PlanBuilder(const Shape &shape, llvm::StringRef algorithm, uint64_t maxOps)
    : maxOps_(maxOps) {
  assert(!checkShape(shape) && "generator built an invalid shape");
  plan_.shape = shape;
  plan_.algorithm = algorithm.str();
  plan_.programs.resize(shape.ranks);
}

uint32_t PlanBuilder::add(uint32_t rank, Op op) {
  assert(rank < ranks() && "rank out of range");
  if (++ops_ > maxOps_)
    throw PlanTooLarge{maxOps_};
  op.deps = DepKind::Step;
  op.step = step_;
  if (op.buf == Buffer::Tmp)
    scratchUsed_ = std::max(scratchUsed_, op.chunk + op.count);
  if (hasSrc(op.kind) && op.src == Buffer::Tmp)
    scratchUsed_ = std::max(scratchUsed_, op.srcChunk + op.count);
  if (op.hasDst && op.dst == Buffer::Tmp)
    scratchUsed_ = std::max(scratchUsed_, op.dstChunk + op.count);
  auto &ops = plan_.programs[rank].ops;
  ops.push_back(std::move(op));
  return static_cast<uint32_t>(ops.size() - 1);
}

uint32_t PlanBuilder::send(uint32_t rank, uint32_t to, Slots from) {
  Op op;
  op.kind = OpKind::Send;
  op.peer = to;
  op.buf = from.buf;
  op.chunk = from.chunk;
  op.count = from.count;
  return add(rank, std::move(op));
}

uint32_t PlanBuilder::recv(uint32_t rank, uint32_t from, Slots into) {
  Op op;
  op.kind = OpKind::Recv;
  op.peer = from;
  op.buf = into.buf;
  op.chunk = into.chunk;
  op.count = into.count;
  return add(rank, std::move(op));
}

uint32_t PlanBuilder::recvReduce(uint32_t rank, uint32_t from, Slots into, Order order) {
  Op op;
  op.kind = OpKind::RecvReduce;
  op.peer = from;
  op.buf = into.buf;
  op.chunk = into.chunk;
  op.count = into.count;
  op.order = order;
  return add(rank, std::move(op));
}

uint32_t PlanBuilder::reduce(uint32_t rank, Slots into, Slots src, Order order) {
  assert(into.count == src.count && "reduce ranges differ in length");
  Op op;
  op.kind = OpKind::Reduce;
  op.buf = into.buf;
  op.chunk = into.chunk;
  op.count = into.count;
  op.src = src.buf;
  op.srcChunk = src.chunk;
  op.order = order;
  return add(rank, std::move(op));
}

uint32_t PlanBuilder::copy(uint32_t rank, Slots into, Slots src) {
  assert(into.count == src.count && "copy ranges differ in length");
  Op op;
  op.kind = OpKind::Copy;
  op.buf = into.buf;
  op.chunk = into.chunk;
  op.count = into.count;
  op.src = src.buf;
  op.srcChunk = src.chunk;
  return add(rank, std::move(op));
}

uint32_t PlanBuilder::recvReduceInto(uint32_t rank, uint32_t from, Slots operand, Slots dst,
                                     Order order) {
  assert(operand.count == dst.count && "recv_reduce ranges differ in length");
  Op op;
  op.kind = OpKind::RecvReduce;
  op.peer = from;
  op.buf = operand.buf;
  op.chunk = operand.chunk;
  op.count = operand.count;
  op.order = order;
  op.hasDst = true;
  op.dst = dst.buf;
  op.dstChunk = dst.chunk;
  return add(rank, std::move(op));
}

uint32_t PlanBuilder::reduceInto(uint32_t rank, Slots operand, Slots src, Slots dst,
                                 Order order) {
  assert(operand.count == src.count && operand.count == dst.count &&
         "reduce ranges differ in length");
  Op op;
  op.kind = OpKind::Reduce;
  op.buf = operand.buf;
  op.chunk = operand.chunk;
  op.count = operand.count;
  op.src = src.buf;
  op.srcChunk = src.chunk;
  op.order = order;
  op.hasDst = true;
  op.dst = dst.buf;
  op.dstChunk = dst.chunk;
  return add(rank, std::move(op));
}

void PlanBuilder::setAfter(uint32_t rank, uint32_t index, llvm::ArrayRef<uint32_t> deps) {
  Op &op = plan_.programs[rank].ops[index];
  op.deps = deps.empty() ? DepKind::None : DepKind::After;
  op.step = 0;
  op.after.assign(deps.begin(), deps.end());
  std::sort(op.after.begin(), op.after.end());
  op.after.erase(std::unique(op.after.begin(), op.after.end()), op.after.end());
  assert((op.after.empty() || op.after.back() < index) && "dependency not earlier");
}

Plan PlanBuilder::take() {
  plan_.shape.scratch = std::max(plan_.shape.scratch, scratchUsed_);
  return std::move(plan_);
}

} // namespace collc::ir
