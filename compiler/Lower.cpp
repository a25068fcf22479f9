// compiler/Lower.cpp: ir::Plan → rt::LoadedPlan → bytes (runtime/bytecode/Encoder).
//
// The mapping is one to one: every field the canonical text prints has a
// field in the bytecode op, so `collc disasm` reproduces the same text.
#include "compiler/Lower.h"

#include "runtime/bytecode/Encoder.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <cassert>

namespace collc::compiler {

// The bytecode (which the runtime reads without the IR) keeps the same limits.
static_assert(rt::format::maxRanks == ir::maxRanks && rt::format::maxChunks == ir::maxChunks &&
              rt::format::maxScratch == ir::maxScratch);

namespace {

rt::Collective toRt(ir::Collective c) {
  switch (c) {
  case ir::Collective::Allreduce:
    return rt::Collective::Allreduce;
  case ir::Collective::Reduce:
    return rt::Collective::Reduce;
  case ir::Collective::ReduceScatterBlock:
    return rt::Collective::ReduceScatterBlock;
  case ir::Collective::Allgather:
    return rt::Collective::Allgather;
  case ir::Collective::Bcast:
    return rt::Collective::Bcast;
  case ir::Collective::Scan:
    return rt::Collective::Scan;
  case ir::Collective::Exscan:
    return rt::Collective::Exscan;
  case ir::Collective::Alltoall:
    return rt::Collective::Alltoall;
  case ir::Collective::Gather:
    return rt::Collective::Gather;
  case ir::Collective::Scatter:
    return rt::Collective::Scatter;
  case ir::Collective::Barrier:
    return rt::Collective::Barrier;
  }
  llvm_unreachable("bad collective");
}

rt::OpKind toRt(ir::OpKind k) {
  switch (k) {
  case ir::OpKind::Send:
    return rt::OpKind::Send;
  case ir::OpKind::Recv:
    return rt::OpKind::Recv;
  case ir::OpKind::RecvReduce:
    return rt::OpKind::RecvReduce;
  case ir::OpKind::Reduce:
    return rt::OpKind::Reduce;
  case ir::OpKind::Copy:
    return rt::OpKind::Copy;
  }
  llvm_unreachable("bad op kind");
}

rt::Buffer toRt(ir::Buffer b) {
  switch (b) {
  case ir::Buffer::In:
    return rt::Buffer::In;
  case ir::Buffer::Out:
    return rt::Buffer::Out;
  case ir::Buffer::Tmp:
    return rt::Buffer::Tmp;
  }
  llvm_unreachable("bad buffer");
}

} // namespace

namespace {

/// The header fields of `plan`.
rt::LoadedPlan headerOf(const ir::Plan &plan, rt::Proof proof) {
  assert(!ir::checkShape(plan.shape) && "lowering a malformed shape");
  assert(plan.programs.size() == plan.shape.ranks && "one program per rank");
  rt::LoadedPlan out;
  const ir::Shape &s = plan.shape;
  out.shape = {toRt(s.collective), s.ranks,      ir::hasRoot(s.collective) ? s.root : 0,
               s.chunks,           s.scratch,    s.commutative,
               s.inPlace};
  out.proof = proof;
  out.algorithm = plan.algorithm;
  return out;
}

rt::Program toBytecodeProgram(llvm::ArrayRef<ir::Op> ops) {
  rt::Program prog;
  {
    prog.ops.reserve(ops.size());
    for (const ir::Op &o : ops) {
      rt::Op op;
      op.kind = toRt(o.kind);
      op.buf = toRt(o.buf);
      op.count = o.count;
      op.chunk = o.chunk;
      if (ir::isMessage(o.kind))
        op.peer = o.peer;
      if (ir::hasSrc(o.kind)) {
        op.src = toRt(o.src);
        op.srcChunk = o.srcChunk;
      }
      if (ir::hasOrder(o.kind))
        op.order = o.order == ir::Order::BufFirst ? rt::Order::BufFirst
                                                  : rt::Order::OtherFirst;
      if (o.hasDst) {
        op.hasDst = true;
        op.dst = toRt(o.dst);
        op.dstChunk = o.dstChunk;
      }
      op.opcode = rt::opcodeFor(op.kind, op.order, op.hasDst);
      switch (o.deps) {
      case ir::DepKind::None:
        break;
      case ir::DepKind::Step:
        op.deps = rt::DepKind::Step;
        op.step = o.step;
        break;
      case ir::DepKind::After:
        op.deps = rt::DepKind::After;
        op.afterBegin = static_cast<uint32_t>(prog.after.size());
        op.afterCount = static_cast<uint32_t>(o.after.size());
        prog.after.insert(prog.after.end(), o.after.begin(), o.after.end());
        break;
      }
      prog.ops.push_back(op);
    }
  }
  return prog;
}

} // namespace

rt::LoadedPlan toBytecodePlan(const ir::Plan &plan, rt::Proof proof) {
  rt::LoadedPlan out = headerOf(plan, proof);
  out.programs.reserve(plan.programs.size());
  for (const ir::Program &prog : plan.programs)
    out.programs.push_back(toBytecodeProgram(prog.ops));
  return out;
}

std::vector<uint8_t> lower(const ir::Plan &plan, rt::Proof proof) {
  return rt::encode(toBytecodePlan(plan, proof));
}

rt::LoadedPlan toPartialBytecodePlan(const ir::Plan &plan, uint32_t own,
                                     llvm::ArrayRef<uint32_t> sections) {
  assert(llvm::is_sorted(sections) && llvm::is_contained(sections, own) &&
         "sections strictly increasing, own among them");
  rt::LoadedPlan out = headerOf(plan, rt::Proof{});
  out.partial = true;
  out.own = own;
  out.sections.assign(sections.begin(), sections.end());
  out.programs.reserve(sections.size());
  for (uint32_t r : sections)
    out.programs.push_back(toBytecodeProgram(plan.programs[r].ops));
  return out;
}

std::vector<uint8_t> lowerPartial(const ir::Plan &plan, uint32_t own,
                                  llvm::ArrayRef<uint32_t> sections) {
  return rt::encode(toPartialBytecodePlan(plan, own, sections));
}

} // namespace collc::compiler
