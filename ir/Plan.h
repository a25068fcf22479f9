// ir/Plan.h: the plan IR — a shape and one op DAG per rank (docs/plan-format.md, "Shape").
//
// Invariants of a well-formed plan (checked by ir::checkPlan, by the reader
// and by the verifier; everything past them may assert):
//  - shape: ranks >= 1, chunks >= 1, root < ranks (only for collectives with a
//    root), chunks a multiple of ranks for the block collectives
//    (blockCollective: reduce_scatter_block, allgather, alltoall, gather, scatter);
//  - programs.size() == ranks;
//  - every op names buffers its rank has and slot ranges inside them, count >= 1;
//  - `after` indices are strictly smaller than the op's own index;
//  - `step` values are non-decreasing in listing order among the ops that use steps.
// Peers are *not* part of well-formedness: a peer outside 0..p-1 or equal to
// the rank itself is a `mismatch` the verifier reports.
#ifndef COLLC_IR_PLAN_H
#define COLLC_IR_PLAN_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace collc::ir {

/// The collective a plan implements (ir/Collectives.def).
enum class Collective : uint8_t {
#define COLLC_COLLECTIVE(Enum, Text, HasRoot, Reduces) Enum,
#include "ir/Collectives.def"
};

/// The kind of an op (ir/Ops.def).
enum class OpKind : uint8_t {
#define COLLC_OP(Enum, Text, IsMessage, HasSrc, HasOrder, Writes) Enum,
#include "ir/Ops.def"
};

/// A per-rank buffer: the user's send buffer, receive buffer, or scratch.
enum class Buffer : uint8_t { In, Out, Tmp };

/// Operand order of a combining op. `OtherFirst` is `recv_first` for
/// recv_reduce (buf = recv ∘ buf) and `src_first` for reduce (buf = src ∘ buf);
/// `BufFirst` is buf = buf ∘ other.
enum class Order : uint8_t { OtherFirst, BufFirst };

/// How an op's dependencies are written (docs/plan-format.md, "Dependencies").
enum class DepKind : uint8_t {
  None,  ///< no dependencies
  Step,  ///< depends on every op of the nearest lower step of this rank
  After, ///< depends on exactly the ops listed in `after`
};

/// The shape a plan is compiled for.
struct Shape {
  Collective collective = Collective::Allreduce;
  uint32_t ranks = 1;
  uint32_t root = 0;    ///< meaningful only when hasRoot(collective)
  uint32_t chunks = 1;
  uint32_t scratch = 0; ///< tmp slots per rank
  bool commutative = true; ///< true: only correct for commutative operations
  bool inPlace = false;    ///< also correct with in and out aliased

  bool operator==(const Shape &) const = default;
};

/// A range of consecutive slots of one buffer.
struct Slots {
  Buffer buf = Buffer::Out;
  uint32_t chunk = 0;
  uint32_t count = 1;

  uint32_t end() const { return chunk + count; }
  bool overlaps(const Slots &o) const {
    return buf == o.buf && chunk < o.end() && o.chunk < end();
  }
  bool operator==(const Slots &) const = default;
};

inline Slots in(uint32_t chunk, uint32_t count = 1) { return {Buffer::In, chunk, count}; }
inline Slots out(uint32_t chunk, uint32_t count = 1) { return {Buffer::Out, chunk, count}; }
inline Slots tmp(uint32_t chunk, uint32_t count = 1) { return {Buffer::Tmp, chunk, count}; }

/// Where an op was written: a 1-based line of its plan's source file
/// (Plan::source), 0 when unknown. A location is not part of what a plan
/// means, so any two compare equal: a plan instantiated from an algorithm
/// file, read from YAML or built in C++ compares by its ops alone.
struct SourceLine {
  uint32_t line = 0;
  friend bool operator==(SourceLine, SourceLine) { return true; }
};

/// One op of a rank's program. Fields an op kind does not use (ir/Ops.def)
/// keep their default values, so == compares what a plan means.
struct Op {
  // Fields are laid out small to large (64 bytes): a plan at scale is
  // millions of ops.
  OpKind kind = OpKind::Send;
  Buffer buf = Buffer::Out;
  Buffer src = Buffer::In;          ///< reduce, copy
  Order order = Order::OtherFirst;  ///< recv_reduce, reduce
  DepKind deps = DepKind::None;
  /// Three-address form of recv_reduce / reduce: the result goes to
  /// dst[dstChunk ..) and buf[chunk ..) is only read. Without it the result
  /// overwrites buf[chunk ..).
  bool hasDst = false;
  Buffer dst = Buffer::Out;
  /// `to` of send, `from` of recv / recv_reduce. A negative peer of the text
  /// (out of range, a `mismatch`) is kept as its 32-bit two's complement:
  /// ranks are below 2^20, so values from 2^31 up mean negative (peerValue).
  uint32_t peer = 0;
  uint32_t chunk = 0;
  uint32_t count = 1;
  uint32_t srcChunk = 0;            ///< reduce, copy
  uint32_t dstChunk = 0;            ///< when hasDst
  uint32_t step = 0;                ///< when deps == Step
  SourceLine loc; ///< the line that emitted the op (ignored by ==)
  llvm::SmallVector<uint32_t, 2> after; ///< when deps == After

  Slots slots() const { return {buf, chunk, count}; }
  Slots srcSlots() const { return {src, srcChunk, count}; }
  /// The slots the op writes (recv, recv_reduce, reduce, copy).
  Slots dstSlots() const { return hasDst ? Slots{dst, dstChunk, count} : slots(); }
  bool operator==(const Op &) const = default;
};

/// One rank's ops in listing order.
struct Program {
  llvm::SmallVector<Op, 0> ops;
  bool operator==(const Program &) const = default;
};

/// A plan: a shape, a free-form algorithm name and one program per rank.
struct Plan {
  Shape shape;
  std::string algorithm;
  llvm::SmallVector<Program, 0> programs;
  /// The file the plan was read or instantiated from, naming the ops'
  /// SourceLine in diagnostics ("ring.calgo"); empty when unknown. Like the
  /// lines, not part of ==.
  std::string source;

  size_t numOps() const;
  bool operator==(const Plan &o) const {
    return shape == o.shape && algorithm == o.algorithm && programs == o.programs;
  }
};

/// The peer as written: negative for the values a negative `to`/`from` gives.
inline int64_t peerValue(uint32_t peer) {
  return peer > uint32_t(INT32_MAX) ? int64_t(int32_t(peer)) : int64_t(peer);
}

// --- properties from the tables ---------------------------------------------

llvm::StringRef name(Collective c);
llvm::StringRef name(OpKind k);
llvm::StringRef name(Buffer b);
/// Order keyword for `kind` ("recv_first"/"buf_first" or "src_first"/"buf_first").
llvm::StringRef orderName(OpKind kind, Order o);
std::optional<Collective> parseCollective(llvm::StringRef s);
/// Every collective's name, for messages: "allreduce, reduce, ... or scatter".
llvm::StringRef collectiveNames();
std::optional<OpKind> parseOpKind(llvm::StringRef s);
std::optional<Buffer> parseBuffer(llvm::StringRef s);
std::optional<Order> parseOrder(OpKind kind, llvm::StringRef s);

bool hasRoot(Collective c);
/// True when the collective combines values with the user's operation.
bool reduces(Collective c);
/// True when a plan of the collective may claim `in_place` (MPI_IN_PLACE):
/// all but bcast (no input), reduce_scatter_block and scatter (whose root's
/// out lies inside its in) and barrier (no buffers at run time).
bool allowsInPlace(Collective c);
bool isMessage(OpKind k);
bool hasSrc(OpKind k);
bool hasOrder(OpKind k);
/// True when the op writes (buf or, in three-address form, dst).
bool writesBuf(OpKind k);
/// True when the op may take a separate destination (recv_reduce, reduce).
inline bool allowsDst(OpKind k) { return hasOrder(k); }

// --- buffers and well-formedness ----------------------------------------------

/// Number of slots of `buf` on `rank`, or nullopt when the rank has no such
/// buffer (docs/plan-format.md, "Buffers"). Precondition: rank < shape.ranks.
std::optional<uint32_t> bufferSlots(const Shape &shape, uint32_t rank, Buffer buf);

/// True when the collective's buffers are p blocks (reduce_scatter_block,
/// allgather, alltoall, gather, scatter): chunks must be a multiple of ranks,
/// and each block is chunks/ranks slots.
bool blockCollective(Collective c);

/// The vector chunk held by slot `slot` of `rank`'s `in` buffer.
uint32_t inChunk(const Shape &shape, uint32_t rank, uint32_t slot);
/// The vector chunk held (as the result) by slot `slot` of `rank`'s `out`.
/// In alltoall the chunks of a rank's in are numbered by the block's
/// destination: out slot j·k + i (k = chunks/ranks) of rank r holds chunk
/// r·k + i of rank j's in, so the chunk is not affine across blocks.
uint32_t outChunk(const Shape &shape, uint32_t rank, uint32_t slot);
/// For the collectives that move data (not reduces()): the rank whose data
/// slot `slot` of `rank`'s out holds at the end.
uint32_t outOwner(const Shape &shape, uint32_t rank, uint32_t slot);
/// With `in` and `out` one buffer (in place), the out slot that in slot 0
/// shares: rank·(chunks/ranks) for allgather, else 0.
uint32_t inPlaceOffset(const Shape &shape, uint32_t rank);
/// Whether `rank`'s out slots must hold a result at the end (not on the
/// non-root ranks of reduce, nor on rank 0 of exscan, nor anywhere in a
/// barrier, whose slots are zero-byte tokens).
bool outRequired(const Shape &shape, uint32_t rank);

/// Shape limits of format v1 (checkShape; the bytecode has the same).
inline constexpr uint32_t maxRanks = 1u << 20, maxChunks = 1u << 24, maxScratch = 1u << 24;

/// A malformed shape: the format-v1 key at fault and why.
struct ShapeError {
  llvm::StringRef field; ///< "ranks", "chunks", "scratch", "root" or "in_place"
  std::string message;
};

/// Why the shape is malformed, or nullopt.
std::optional<ShapeError> checkShape(const Shape &shape);

/// Why op `index` of `rank` is malformed, or nullopt. `ops` is the rank's
/// program (the op itself is ops[index]). Does not check peers.
std::optional<std::string> checkOp(const Shape &shape, uint32_t rank,
                                   llvm::ArrayRef<Op> ops, uint32_t index);

/// Short text of an op for diagnostics: "recv_reduce out[1] from 1".
std::string describe(const Op &op);
/// "out[1]" or "out[1..3)" for a multi-slot range.
std::string describe(const Slots &s);

// --- dependencies ---------------------------------------------------------------

/// The explicit dependency lists of one program, in compressed-row form:
/// preds(i) are the ops op i waits for, each smaller than i.
class DepGraph {
public:
  explicit DepGraph(llvm::ArrayRef<Op> ops);
  llvm::ArrayRef<uint32_t> preds(uint32_t i) const {
    return llvm::ArrayRef<uint32_t>(edges_).slice(begin_[i], begin_[i + 1] - begin_[i]);
  }
  uint32_t size() const { return static_cast<uint32_t>(begin_.size() - 1); }

private:
  std::vector<uint32_t> begin_;
  std::vector<uint32_t> edges_;
};

} // namespace collc::ir

#endif // COLLC_IR_PLAN_H
