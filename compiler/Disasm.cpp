// compiler/Disasm.cpp: bytes → rt::load → ir::Plan.
#include "compiler/Disasm.h"

#include "runtime/bytecode/Loader.h"

#include "llvm/Support/ErrorHandling.h"

namespace collc::compiler {

namespace {

ir::Collective toIr(rt::Collective c) {
  switch (c) {
  case rt::Collective::Allreduce:
    return ir::Collective::Allreduce;
  case rt::Collective::Reduce:
    return ir::Collective::Reduce;
  case rt::Collective::ReduceScatterBlock:
    return ir::Collective::ReduceScatterBlock;
  case rt::Collective::Allgather:
    return ir::Collective::Allgather;
  case rt::Collective::Bcast:
    return ir::Collective::Bcast;
  case rt::Collective::Scan:
    return ir::Collective::Scan;
  case rt::Collective::Exscan:
    return ir::Collective::Exscan;
  case rt::Collective::Alltoall:
    return ir::Collective::Alltoall;
  case rt::Collective::Gather:
    return ir::Collective::Gather;
  case rt::Collective::Scatter:
    return ir::Collective::Scatter;
  case rt::Collective::Barrier:
    return ir::Collective::Barrier;
  }
  llvm_unreachable("bad collective");
}

ir::OpKind toIr(rt::OpKind k) {
  switch (k) {
  case rt::OpKind::Send:
    return ir::OpKind::Send;
  case rt::OpKind::Recv:
    return ir::OpKind::Recv;
  case rt::OpKind::RecvReduce:
    return ir::OpKind::RecvReduce;
  case rt::OpKind::Reduce:
    return ir::OpKind::Reduce;
  case rt::OpKind::Copy:
    return ir::OpKind::Copy;
  }
  llvm_unreachable("bad op kind");
}

ir::Buffer toIr(rt::Buffer b) {
  switch (b) {
  case rt::Buffer::In:
    return ir::Buffer::In;
  case rt::Buffer::Out:
    return ir::Buffer::Out;
  case rt::Buffer::Tmp:
    return ir::Buffer::Tmp;
  }
  llvm_unreachable("bad buffer");
}

} // namespace

ir::Plan fromBytecodePlan(const rt::LoadedPlan &plan) {
  ir::Plan out;
  const rt::Shape &s = plan.shape;
  out.shape.collective = toIr(s.collective);
  out.shape.ranks = s.ranks;
  out.shape.root = s.root;
  out.shape.chunks = s.chunks;
  out.shape.scratch = s.scratch;
  out.shape.commutative = s.commutative;
  out.shape.inPlace = s.inPlace;
  out.algorithm = plan.algorithm;
  out.programs.resize(s.ranks);
  for (size_t r = 0; r < plan.programs.size(); ++r) {
    const rt::Program &prog = plan.programs[r];
    auto &ops = out.programs[plan.rankOf(r)].ops;
    ops.reserve(prog.ops.size());
    for (const rt::Op &o : prog.ops) {
      ir::Op op;
      op.kind = toIr(o.kind);
      op.buf = toIr(o.buf);
      op.chunk = o.chunk;
      op.count = o.count;
      if (rt::isMessage(o.kind))
        op.peer = o.peer;
      if (rt::hasSrc(o.kind)) {
        op.src = toIr(o.src);
        op.srcChunk = o.srcChunk;
      }
      if (rt::combines(o.kind))
        op.order = o.order == rt::Order::BufFirst ? ir::Order::BufFirst
                                                  : ir::Order::OtherFirst;
      if (o.hasDst) {
        op.hasDst = true;
        op.dst = toIr(o.dst);
        op.dstChunk = o.dstChunk;
      }
      switch (o.deps) {
      case rt::DepKind::None:
        break;
      case rt::DepKind::Step:
        op.deps = ir::DepKind::Step;
        op.step = o.step;
        break;
      case rt::DepKind::After: {
        op.deps = ir::DepKind::After;
        std::span<const uint32_t> after = prog.afterOf(o);
        op.after.assign(after.begin(), after.end());
        break;
      }
      }
      ops.push_back(std::move(op));
    }
  }
  return out;
}

llvm::Expected<ir::Plan> disassemble(llvm::ArrayRef<uint8_t> bytes, rt::Proof *proof) {
  rt::LoadedPlan loaded;
  rt::Status s = rt::load({bytes.data(), bytes.size()}, loaded);
  if (!s.ok())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), s.message());
  if (loaded.partial)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "a partial plan (rank %u's program, with %zu sections of %u ranks): only a whole plan "
        "can be disassembled or proven (collc disasm --listing shows it)",
        loaded.own, loaded.sections.size(), loaded.shape.ranks);
  if (proof)
    *proof = loaded.proof;
  return fromBytecodePlan(loaded);
}

std::string proofProperties(ir::Collective collective, bool commutative, bool inPlace,
                            std::optional<bool> identical, const char *inPlaceWords) {
  std::string s;
  if (ir::reduces(collective))
    s += commutative ? ", commutative operations" : ", any associative operation";
  if (inPlace)
    s += std::string(", ") + inPlaceWords;
  if (identical && collective == ir::Collective::Allreduce)
    s += *identical ? ", identical results on all ranks" : ", results may differ between ranks";
  return s;
}

std::string describeProof(const ir::Shape &shape, const rt::Proof &proof) {
  const std::string p =
      proofProperties(shape.collective, shape.commutative, shape.inPlace,
                      proof.verified ? std::optional<bool>(proof.identical) : std::nullopt,
                      "in place");
  const char *head = proof.verified ? "proven" : "unproven (compiled with --no-verify)";
  if (p.empty())
    return head;
  return head + std::string(proof.verified ? ": " : ": claims ") + p.substr(2);
}

} // namespace collc::compiler
