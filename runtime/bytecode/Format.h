// runtime/bytecode/Format.h: the .cplan format — constants, opcode table and
// the plain structs a loaded plan is made of (docs/bytecode.md).
//
// Everything here is part of the file format: numeric codes of collectives,
// buffers and opcodes never change meaning within a format version.
// LLVM-free: the runtime links only the C++ standard library and MPI.
#ifndef COLLC_RUNTIME_BYTECODE_FORMAT_H
#define COLLC_RUNTIME_BYTECODE_FORMAT_H

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace collc::rt {

// --- plan vocabulary (codes as stored in the file) ----------------------------

/// The collective a plan implements; the value is the header byte at 0x06.
enum class Collective : uint8_t {
  Allreduce = 0,
  Reduce = 1,
  ReduceScatterBlock = 2,
  Allgather = 3,
  Bcast = 4,
  Scan = 5,
  Exscan = 6,
  Alltoall = 7,
  Gather = 8,
  Scatter = 9,
  Barrier = 10,
};
inline constexpr unsigned numCollectives = 11;

/// Format-v1 name ("reduce_scatter_block").
const char *name(Collective c);
/// The shape names a root rank (reduce, bcast, gather, scatter).
bool hasRoot(Collective c);
/// Values are combined with the user's operation.
bool reduces(Collective c);
/// Buffers are p blocks, so chunks is a multiple of ranks (reduce_scatter_block,
/// allgather, alltoall, gather, scatter).
bool blockCollective(Collective c);
/// A plan may be proven for in and out aliased (not bcast, reduce_scatter_block
/// or scatter).
bool allowsInPlace(Collective c);

enum class OpKind : uint8_t { Send, Recv, RecvReduce, Reduce, Copy };
const char *name(OpKind k);
inline bool isMessage(OpKind k) {
  return k == OpKind::Send || k == OpKind::Recv || k == OpKind::RecvReduce;
}
inline bool hasSrc(OpKind k) { return k == OpKind::Reduce || k == OpKind::Copy; }
inline bool combines(OpKind k) { return k == OpKind::RecvReduce || k == OpKind::Reduce; }

/// A buffer; the value is its 2-bit code in the mode byte (3 is reserved).
enum class Buffer : uint8_t { In = 0, Out = 1, Tmp = 2 };
const char *name(Buffer b);

/// OtherFirst: buf = msg ∘ buf (recv_reduce) or buf = src ∘ buf (reduce);
/// BufFirst: buf = buf ∘ other.
enum class Order : uint8_t { OtherFirst, BufFirst };

/// How an op's dependencies are given (docs/plan-format.md, "Dependencies").
enum class DepKind : uint8_t { None, Step, After };

/// The opcodes (runtime/bytecode/Opcodes.def); the value is the low nibble of
/// an op's first byte.
enum class Opcode : uint8_t {
#define COLLC_OPCODE(Enum, Code, Mnemonic, Kind, Order, HasDst) Enum = Code,
#include "runtime/bytecode/Opcodes.def"
};

/// What the table says about one 4-bit code.
struct OpcodeInfo {
  bool known = false;       ///< false for reserved codes
  const char *mnemonic;     ///< "recv_reduce.rf", or the reserved code's purpose
  OpKind kind = OpKind::Send;
  Order order = Order::OtherFirst;
  bool hasDst = false; ///< three-address form (a destination word follows)
};
/// Precondition: code < 16.
const OpcodeInfo &opcodeInfo(uint8_t code);
/// The opcode that encodes (kind, order, hasDst); order is ignored for kinds
/// that do not combine. Precondition: hasDst only for combining kinds.
Opcode opcodeFor(OpKind kind, Order order, bool hasDst = false);

// --- file layout ----------------------------------------------------------------

namespace format {
inline constexpr uint8_t magic[4] = {0x7f, 'C', 'P', 'L'};
inline constexpr uint8_t version = 2;

// Fixed header.
inline constexpr size_t offMagic = 0x0, offVersion = 0x4, offFlags = 0x5,
                        offCollective = 0x6, offReserved = 0x7, offSize = 0x8,
                        fixedHeaderSize = 0xc;
inline constexpr size_t checksumSize = 4;
/// Smallest possible file: fixed header, five one-byte LEB128 fields, one
/// offset, one empty section, checksum.
inline constexpr size_t minFileSize = fixedHeaderSize + 5 + 4 + 1 + checksumSize;

// Header flags (byte 0x05): the shape's claims, the proof status, and
// whether the file is a partial plan (docs/bytecode.md, "Partial plans").
inline constexpr uint8_t flagCommutative = 0x01, flagInPlace = 0x02, flagVerified = 0x04,
                         flagIdentical = 0x08, flagPartial = 0x10, flagsReserved = 0xe0;

// Opcode byte:  X T dd oooo
inline constexpr uint8_t opcodeMask = 0x0f;
inline constexpr unsigned depShift = 4;
inline constexpr uint8_t depMask = 0x30;
inline constexpr uint8_t tmpBit = 0x40;  ///< T: buf is tmp (only without mode byte)
inline constexpr uint8_t modeBit = 0x80; ///< X: a mode byte follows
/// The two-bit dependency form in the opcode byte.
enum class DepForm : uint8_t {
  None = 0,     ///< no dependencies
  SameStep = 1, ///< step, same as the rank's previous step op (Δ = 0)
  NextStep = 2, ///< step, one more than the previous step op (Δ = 1)
  /// A dependency word w follows: w = 0: step, then leb Δ; w even: step with
  /// Δ = w/2 + 1; w odd: `after` list of n = w/2 back-references (leb each).
  Explicit = 3,
};

// Mode byte:  R R A S ss bb
inline constexpr uint8_t modeBufMask = 0x03;
inline constexpr unsigned modeSrcShift = 2;
inline constexpr uint8_t modeSrcMask = 0x0c;
inline constexpr uint8_t modeSrcChunk = 0x10; ///< S: a src_chunk operand follows
inline constexpr uint8_t modeAbsPeer = 0x20;  ///< A: the peer is absolute, not relative
inline constexpr uint8_t modeReserved = 0xc0; ///< R: reserved, zero in v1

// Chunk word: leb (chunk << 1 | N); N = 1: a count operand follows.
inline constexpr uint32_t chunkHasCount = 1;
// Destination word of the three-address opcodes: leb (dst_chunk << 2 | dst buffer).
inline constexpr uint32_t dstBufMask = 0x3;
inline constexpr unsigned dstChunkShift = 2;

// Shape limits (the same as ir::checkShape; compiler/Lower.cpp asserts it).
inline constexpr uint32_t maxRanks = 1u << 20, maxChunks = 1u << 24,
                          maxScratch = 1u << 24;
} // namespace format

// --- a loaded plan ----------------------------------------------------------------

/// The shape a plan is compiled for (docs/plan-format.md, "Shape").
struct Shape {
  Collective collective = Collective::Allreduce;
  uint32_t ranks = 1;
  uint32_t root = 0; ///< 0 unless hasRoot(collective)
  uint32_t chunks = 1;
  uint32_t scratch = 0;
  bool commutative = true;
  bool inPlace = false;
  bool operator==(const Shape &) const = default;
};

/// One decoded op, every field explicit. Fields an op kind does not use hold
/// their defaults (peer 0, src In, srcChunk 0, order OtherFirst, step 0).
struct Op {
  OpKind kind = OpKind::Send;
  Opcode opcode = Opcode::Send;
  Buffer buf = Buffer::Out;
  Buffer src = Buffer::In;         ///< reduce, copy
  Order order = Order::OtherFirst; ///< recv_reduce, reduce
  DepKind deps = DepKind::None;
  uint32_t peer = 0;     ///< `to` of send, `from` of recv / recv_reduce
  uint32_t chunk = 0;
  uint32_t count = 1;
  uint32_t srcChunk = 0; ///< reduce, copy
  uint32_t step = 0;     ///< when deps == Step
  bool hasDst = false;   ///< three-address recv_reduce / reduce: result to dst
  Buffer dst = Buffer::Out;  ///< when hasDst
  uint32_t dstChunk = 0;     ///< when hasDst
  uint32_t afterBegin = 0, afterCount = 0; ///< when deps == After: Program::after range
  uint32_t offset = 0;   ///< byte offset of the op's opcode byte in the file

  bool operator==(const Op &) const = default;
};

/// One rank's ops in listing order. `after` holds every op's `after` list
/// back to back, in the order the plan lists them.
struct Program {
  std::vector<Op> ops;
  std::vector<uint32_t> after;

  /// The ops `op` depends on when op.deps == After (each < op's index).
  std::span<const uint32_t> afterOf(const Op &op) const {
    return std::span<const uint32_t>(after).subspan(op.afterBegin, op.afterCount);
  }
  bool operator==(const Program &) const = default;
};

/// What the compiler proved of a plan when it wrote the file (header flags;
/// docs/bytecode.md, "Proof status"). Inside the checksummed header.
struct Proof {
  /// The verifier proved the plan with the shape's claims (commutative-only
  /// or any associative operation, in place or not); false: compiled with
  /// --no-verify, nothing proven.
  bool verified = false;
  /// Proven, and every rank ends with the same reduction trees, operand order
  /// included (allreduce; trivially true for the others). Only with verified.
  bool identical = false;
  bool operator==(const Proof &) const = default;
};

/// A validated plan: everything the loader guarantees is listed in Loader.h.
///
/// A whole plan holds one program per rank. A partial plan (docs/bytecode.md,
/// "Partial plans") is compiled for one rank, `own`: it holds the programs of
/// the ranks in `sections` (strictly increasing, `own` among them, and every
/// rank `own` exchanges messages with), programs[i] being rank sections[i]'s.
/// Only own's program is what that rank runs; the others give the other end
/// of each of own's messages and what the runtime follows to know which
/// chunk a message into tmp carries. A partial plan records no proof.
struct LoadedPlan {
  Shape shape;
  Proof proof;
  std::string algorithm;
  std::vector<Program> programs; ///< one per rank, or per section
  bool partial = false;
  uint32_t own = 0;               ///< partial: the rank it runs on
  std::vector<uint32_t> sections; ///< partial: the ranks of `programs`

  size_t numOps() const;
  /// The rank programs[i] belongs to.
  uint32_t rankOf(size_t i) const { return partial ? sections[i] : uint32_t(i); }
  /// Rank `rank`'s program, or null when a partial plan does not hold it.
  const Program *programOf(uint32_t rank) const;
  /// Whether `rank` can run the plan: any rank of a whole plan, own of a
  /// partial one.
  bool runsOn(uint32_t rank) const { return partial ? rank == own : rank < shape.ranks; }
  bool operator==(const LoadedPlan &) const = default;
};

/// Slots of `buf` on `rank`, or -1 when the rank has no such buffer
/// (docs/plan-format.md, "Buffers"). Precondition: the shape is valid, rank < ranks.
int64_t bufferSlots(const Shape &shape, uint32_t rank, Buffer buf);

// --- primitives shared by the encoder and the loader ------------------------------

/// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320) of `bytes`.
uint32_t crc32(std::span<const uint8_t> bytes);

/// Appends the unsigned LEB128 encoding of `v` (1..5 bytes).
void appendLeb128(std::vector<uint8_t> &out, uint32_t v);
/// Bytes appendLeb128 writes for `v`.
unsigned leb128Size(uint32_t v);
/// Appends `v` as 4 little-endian bytes.
void appendU32(std::vector<uint8_t> &out, uint32_t v);
/// Reads 4 little-endian bytes. Precondition: p[0..4) readable.
inline uint32_t readU32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
/// Overwrites out[at..at+4) with `v` little-endian.
void storeU32(std::vector<uint8_t> &out, size_t at, uint32_t v);
/// Appends `v` as 8 little-endian bytes.
inline void appendU64(std::vector<uint8_t> &out, uint64_t v) {
  appendU32(out, uint32_t(v));
  appendU32(out, uint32_t(v >> 32));
}
/// Reads 8 little-endian bytes. Precondition: p[0..8) readable.
inline uint64_t readU64(const uint8_t *p) {
  return uint64_t(readU32(p)) | uint64_t(readU32(p + 4)) << 32;
}
/// "0x1a3": how file offsets appear in error messages.
std::string hex(uint64_t v);

/// Zigzag code of a peer relative to `rank` in a ring of `ranks`: the signed
/// distance s in (-ranks/2, ranks/2] mapped 0,-1,1,-2,2.. → 0,1,2,3,4..
/// Preconditions: peer < ranks.
uint32_t relativePeerCode(uint32_t rank, uint32_t peer, uint32_t ranks);
/// The signed distance a zigzag code stands for.
inline int64_t unzigzag(uint32_t z) {
  return (z & 1) ? -int64_t(z >> 1) - 1 : int64_t(z >> 1);
}

} // namespace collc::rt

#endif // COLLC_RUNTIME_BYTECODE_FORMAT_H
