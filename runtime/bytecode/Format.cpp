// runtime/bytecode/Format.cpp: tables and encoding primitives of the .cplan format.
#include "runtime/bytecode/Format.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdio>

namespace collc::rt {

const char *name(Collective c) {
  switch (c) {
  case Collective::Allreduce:
    return "allreduce";
  case Collective::Reduce:
    return "reduce";
  case Collective::ReduceScatterBlock:
    return "reduce_scatter_block";
  case Collective::Allgather:
    return "allgather";
  case Collective::Bcast:
    return "bcast";
  case Collective::Scan:
    return "scan";
  case Collective::Exscan:
    return "exscan";
  case Collective::Alltoall:
    return "alltoall";
  case Collective::Gather:
    return "gather";
  case Collective::Scatter:
    return "scatter";
  case Collective::Barrier:
    return "barrier";
  }
  return "?";
}

bool hasRoot(Collective c) {
  return c == Collective::Reduce || c == Collective::Bcast || c == Collective::Gather ||
         c == Collective::Scatter;
}

bool reduces(Collective c) {
  switch (c) {
  case Collective::Allreduce:
  case Collective::Reduce:
  case Collective::ReduceScatterBlock:
  case Collective::Scan:
  case Collective::Exscan:
    return true;
  default:
    return false;
  }
}

bool blockCollective(Collective c) {
  return c == Collective::ReduceScatterBlock || c == Collective::Allgather ||
         c == Collective::Alltoall || c == Collective::Gather || c == Collective::Scatter;
}

bool allowsInPlace(Collective c) {
  return c != Collective::Bcast && c != Collective::ReduceScatterBlock &&
         c != Collective::Scatter && c != Collective::Barrier;
}

const char *name(OpKind k) {
  switch (k) {
  case OpKind::Send:
    return "send";
  case OpKind::Recv:
    return "recv";
  case OpKind::RecvReduce:
    return "recv_reduce";
  case OpKind::Reduce:
    return "reduce";
  case OpKind::Copy:
    return "copy";
  }
  return "?";
}

const char *name(Buffer b) {
  switch (b) {
  case Buffer::In:
    return "in";
  case Buffer::Out:
    return "out";
  case Buffer::Tmp:
    return "tmp";
  }
  return "?";
}

namespace {
constexpr std::array<OpcodeInfo, 16> makeOpcodeTable() {
  std::array<OpcodeInfo, 16> t{};
  for (OpcodeInfo &i : t)
    i.mnemonic = "reserved";
#define COLLC_OPCODE(Enum, Code, Mnemonic, Kind, Ord, HasDst)                            \
  t[Code] = OpcodeInfo{true, Mnemonic, OpKind::Kind, Order::Ord, HasDst};
#define COLLC_OPCODE_RESERVED(Code, Purpose) t[Code].mnemonic = Purpose;
#include "runtime/bytecode/Opcodes.def"
  return t;
}
constexpr std::array<OpcodeInfo, 16> opcodeTable = makeOpcodeTable();

constexpr std::array<uint32_t, 256> makeCrcTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> crcTable = makeCrcTable();
} // namespace

const OpcodeInfo &opcodeInfo(uint8_t code) {
  assert(code < 16 && "opcode is a nibble");
  return opcodeTable[code & format::opcodeMask];
}

Opcode opcodeFor(OpKind kind, Order order, bool hasDst) {
  const bool combining = combines(kind);
#define COLLC_OPCODE(Enum, Code, Mnemonic, Kind, Ord, HasDst)                            \
  if (kind == OpKind::Kind && (!combining || order == Order::Ord) && hasDst == HasDst)   \
    return Opcode::Enum;
#include "runtime/bytecode/Opcodes.def"
  assert(false && "no opcode for this op kind");
  return Opcode::Send;
}

const Program *LoadedPlan::programOf(uint32_t rank) const {
  if (!partial)
    return rank < programs.size() ? &programs[rank] : nullptr;
  auto it = std::lower_bound(sections.begin(), sections.end(), rank);
  if (it == sections.end() || *it != rank)
    return nullptr;
  return &programs[size_t(it - sections.begin())];
}

size_t LoadedPlan::numOps() const {
  size_t n = 0;
  for (const Program &p : programs)
    n += p.ops.size();
  return n;
}

int64_t bufferSlots(const Shape &s, uint32_t rank, Buffer buf) {
  switch (buf) {
  case Buffer::In:
    if (s.collective == Collective::Bcast || (s.collective == Collective::Scatter && rank != s.root))
      return -1;
    if (s.collective == Collective::Allgather || s.collective == Collective::Gather)
      return s.chunks / s.ranks;
    return s.chunks;
  case Buffer::Out:
    if ((s.collective == Collective::Reduce || s.collective == Collective::Gather) &&
        rank != s.root)
      return -1;
    if (s.collective == Collective::ReduceScatterBlock || s.collective == Collective::Scatter)
      return s.chunks / s.ranks;
    return s.chunks;
  case Buffer::Tmp:
    return s.scratch;
  }
  return -1;
}

uint32_t crc32(std::span<const uint8_t> bytes) {
  uint32_t c = 0xFFFFFFFFu;
  for (uint8_t b : bytes)
    c = crcTable[(c ^ b) & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void appendLeb128(std::vector<uint8_t> &out, uint32_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

unsigned leb128Size(uint32_t v) {
  unsigned n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

void appendU32(std::vector<uint8_t> &out, uint32_t v) {
  for (int k = 0; k < 4; ++k)
    out.push_back(static_cast<uint8_t>(v >> (8 * k)));
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

void storeU32(std::vector<uint8_t> &out, size_t at, uint32_t v) {
  assert(at + 4 <= out.size());
  for (int k = 0; k < 4; ++k)
    out[at + k] = static_cast<uint8_t>(v >> (8 * k));
}

uint32_t relativePeerCode(uint32_t rank, uint32_t peer, uint32_t ranks) {
  assert(peer < ranks && rank < ranks);
  const int64_t p = ranks;
  int64_t d = (int64_t(peer) - int64_t(rank) + p) % p; // 0..p-1
  if (d > p / 2)
    d -= p;                                             // (-p/2, p/2]
  return static_cast<uint32_t>(d >= 0 ? 2 * d : -2 * d - 1);
}

} // namespace collc::rt
