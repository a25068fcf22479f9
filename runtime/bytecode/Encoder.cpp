// runtime/bytecode/Encoder.cpp: LoadedPlan → .cplan bytes.
//
// Per op the encoder picks the shortest form the layout offers: no mode byte
// when the op uses the defaults (buf out or tmp, src in at the same chunk, a
// peer given relative to the rank), the step forms Δ0/Δ1 in the opcode byte,
// the one-word form for other step gaps up to 2^31, relative peers whenever the
// peer is a valid other rank, and no count operand when the count is 1.
#include "runtime/bytecode/Encoder.h"

#include <cassert>

namespace collc::rt {

namespace {

using namespace format;

void encodeOp(const Program &prog, uint32_t index, uint32_t rank, uint32_t ranks,
              uint64_t &lastStep, std::vector<uint8_t> &out) {
  const Op &op = prog.ops[index];
  const bool relPeer = isMessage(op.kind) && op.peer < ranks && op.peer != rank;
  const bool src = hasSrc(op.kind);
  const bool needCount = op.count != 1;
  const bool needSrcChunk = src && op.srcChunk != op.chunk;
  const bool needMode = op.buf == Buffer::In || needSrcChunk ||
                        (src && op.src != Buffer::In) ||
                        (isMessage(op.kind) && !relPeer);

  uint8_t first = static_cast<uint8_t>(opcodeFor(op.kind, op.order, op.hasDst));
  std::vector<uint8_t> depBytes;
  switch (op.deps) {
  case DepKind::None:
    break;
  case DepKind::Step: {
    assert(op.step >= lastStep && "steps must not decrease");
    const uint64_t delta = op.step - lastStep;
    lastStep = op.step;
    if (delta <= 1) {
      first |= uint8_t(delta == 0 ? DepForm::SameStep : DepForm::NextStep) << depShift;
    } else if (delta <= (uint64_t(UINT32_MAX) - 1) / 2 + 1) {
      first |= uint8_t(DepForm::Explicit) << depShift;
      appendLeb128(depBytes, static_cast<uint32_t>(2 * (delta - 1))); // even word
    } else {
      first |= uint8_t(DepForm::Explicit) << depShift;
      appendLeb128(depBytes, 0);
      appendLeb128(depBytes, static_cast<uint32_t>(delta));
    }
    break;
  }
  case DepKind::After: {
    assert(op.afterCount < (1u << 31) && "after list too long to encode");
    assert(op.afterCount < (1u << 29) && "after list too long to encode");
    first |= uint8_t(DepForm::Explicit) << depShift;
    auto deps = prog.afterOf(op);
    if (deps.size() == 1) { // word 4(b - 1) + 1: the one back-reference b inside the word
      assert(deps[0] < index && "after entry not earlier than its op");
      const uint32_t back = index - deps[0];
      if (back <= (1u << 30)) {
        appendLeb128(depBytes, 4 * (back - 1) + 1);
        break;
      }
    }
    appendLeb128(depBytes, 4 * op.afterCount + 3); // word 4n + 3, then n back-references
    for (uint32_t dep : deps) {
      assert(dep < index && "after entry not earlier than its op");
      appendLeb128(depBytes, index - dep);
    }
    break;
  }
  }

  if (needMode) {
    first |= modeBit;
    uint8_t mode = uint8_t(op.buf);
    if (src)
      mode |= uint8_t(uint8_t(op.src) << modeSrcShift);
    if (needSrcChunk)
      mode |= modeSrcChunk;
    if (isMessage(op.kind) && !relPeer)
      mode |= modeAbsPeer;
    out.push_back(first);
    out.push_back(mode);
  } else {
    if (op.buf == Buffer::Tmp)
      first |= tmpBit;
    out.push_back(first);
  }
  out.insert(out.end(), depBytes.begin(), depBytes.end());
  if (isMessage(op.kind))
    appendLeb128(out, relPeer ? relativePeerCode(rank, op.peer, ranks) : op.peer);
  assert(op.chunk < (1u << 31) && "chunk too large for the chunk word");
  appendLeb128(out, op.chunk << 1 | (needCount ? chunkHasCount : 0));
  if (needCount)
    appendLeb128(out, op.count);
  if (needSrcChunk)
    appendLeb128(out, op.srcChunk);
  if (op.hasDst) {
    assert(op.dstChunk < (1u << 30) && "dst chunk too large for the destination word");
    appendLeb128(out, op.dstChunk << dstChunkShift | uint32_t(op.dst));
  }
}

} // namespace

std::vector<uint8_t> encode(const LoadedPlan &plan) {
  const Shape &s = plan.shape;
  assert(plan.programs.size() == (plan.partial ? plan.sections.size() : s.ranks) &&
         "one program per rank or section");
  assert((!plan.partial || !plan.proof.verified) && "a partial plan records no proof");
  std::vector<uint8_t> out(magic, magic + 4);
  out.push_back(version);
  out.push_back(uint8_t((s.commutative ? flagCommutative : 0) | (s.inPlace ? flagInPlace : 0) |
                        (plan.proof.verified ? flagVerified : 0) |
                        (plan.proof.identical ? flagIdentical : 0) |
                        (plan.partial ? flagPartial : 0)));
  out.push_back(uint8_t(s.collective));
  out.push_back(0);
  appendU32(out, 0); // size, patched below
  appendLeb128(out, s.ranks);
  appendLeb128(out, s.root);
  appendLeb128(out, s.chunks);
  appendLeb128(out, s.scratch);
  appendLeb128(out, static_cast<uint32_t>(plan.algorithm.size()));
  out.insert(out.end(), plan.algorithm.begin(), plan.algorithm.end());

  if (plan.partial) {
    appendLeb128(out, plan.own);
    appendLeb128(out, static_cast<uint32_t>(plan.sections.size()));
    for (uint32_t r : plan.sections)
      appendLeb128(out, r);
  }
  const size_t table = out.size();
  out.resize(table + 4 * plan.programs.size());
  for (size_t i = 0; i < plan.programs.size(); ++i) {
    const uint32_t r = plan.rankOf(i);
    storeU32(out, table + 4 * i, static_cast<uint32_t>(out.size()));
    const Program &prog = plan.programs[i];
    appendLeb128(out, static_cast<uint32_t>(prog.ops.size()));
    uint64_t lastStep = 0;
    for (uint32_t i = 0; i < prog.ops.size(); ++i)
      encodeOp(prog, i, r, s.ranks, lastStep, out);
  }
  storeU32(out, offSize, static_cast<uint32_t>(out.size() + checksumSize));
  appendU32(out, crc32(out));
  return out;
}

} // namespace collc::rt
