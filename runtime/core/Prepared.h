// runtime/core/Prepared.h: one rank's program, made ready to execute.
//
// Preparing is done once per (loaded plan, rank) and is independent of the
// element count: dependency counts and successor lists, the channel sequence
// number of every message end (from which tags derive), and the chunk each
// tmp slot holds at every op that touches tmp. The last needs the whole plan:
// tmp slots have room for any chunk, but chunks differ in size by up to one
// element, so a message from or to tmp must know which chunks it carries.
// For a verified plan that is static; it is found by replaying all ranks'
// programs in listing order, following messages (see Prepared.cpp). A partial
// plan (docs/bytecode.md, "Partial plans") holds the own rank's program and a
// few others': there every value is followed through the programs present,
// forwards and backwards, to an in or out slot that names its chunk (in a
// verified plan a value only ever meets slots of its own chunk).
//
// Tags are per channel: the k-th message of a channel (a → b) in an
// execution has tag base(a → b) + k, where the base comes from the
// executor's caller (runtime/api: a counter per channel and communicator,
// advanced by the channel's length at every execution, which both ends
// compute alike from their own programs). So no rank needs another rank's
// program to agree on tags.
#ifndef COLLC_RUNTIME_CORE_PREPARED_H
#define COLLC_RUNTIME_CORE_PREPARED_H

#include "runtime/bytecode/Format.h"

#include <cstdint>
#include <vector>

namespace collc::rt {

/// Chunk c of a vector of n elements cut into C chunks starts at floor(c·n/C)
/// (docs/plan-format.md, "Chunks").
inline uint64_t chunkBegin(uint64_t c, uint64_t n, uint64_t C) {
  __extension__ using Wide = unsigned __int128; // c·n may not fit 64 bits
  return static_cast<uint64_t>((static_cast<Wide>(c) * n) / C);
}

/// Where the chunks of a call's vector lie. Uniform (every collective but
/// MPI_Reduce_scatter): chunk c of n elements cut into C starts at
/// chunkBegin(c, n, C). Blocked (a reduce_scatter_block plan serving
/// MPI_Reduce_scatter): the C chunks form p blocks of C/p, block b holds
/// recvcounts[b] elements and is cut into its chunks by the same rule
/// (docs/plan-format.md, "Chunks").
class ChunkLayout {
public:
  ChunkLayout() = default;
  ChunkLayout(uint64_t n, uint32_t chunks) : n_(n), chunks_(chunks) {}
  /// `blockStart` has p + 1 non-decreasing entries from 0; chunks % p == 0.
  ChunkLayout(const uint64_t *blockStart, uint32_t ranks, uint32_t chunks)
      : n_(blockStart[ranks]), chunks_(chunks), perBlock_(chunks / ranks),
        blockStart_(blockStart) {}

  uint64_t begin(uint32_t c) const {
    if (!blockStart_)
      return chunkBegin(c, n_, chunks_);
    const uint32_t b = c / perBlock_, i = c % perBlock_;
    if (b * perBlock_ == chunks_) // one past the last chunk
      return n_;
    return blockStart_[b] + chunkBegin(i, blockStart_[b + 1] - blockStart_[b], perBlock_);
  }
  uint64_t size(uint32_t c) const { return begin(c + 1) - begin(c); }
  uint64_t total() const { return n_; }
  /// The largest chunk: what a tmp slot must hold.
  uint64_t maxChunk() const;

private:
  uint64_t n_ = 0;
  uint32_t chunks_ = 1, perBlock_ = 1;
  const uint64_t *blockStart_ = nullptr;
};

/// The chunk held by slot `slot` of `rank`'s in / out buffer.
uint32_t inChunkOf(const Shape &s, uint32_t rank, uint32_t slot);
uint32_t outChunkOf(const Shape &s, uint32_t rank, uint32_t slot);
/// Where slot `slot` of `rank`'s out lies in the call's layout, in chunks:
/// out holds chunks in layout order from its first slot's place. The chunk
/// itself but in alltoall, whose out slot j·k + i lies at place j·k + i and
/// holds chunk rank·k + i of rank j (the same size: every block is cut alike).
uint32_t outPlaceOf(const Shape &s, uint32_t rank, uint32_t slot);

inline constexpr uint32_t unknownChunk = ~0u;

/// One op, with everything the interpreter needs that does not depend on n.
struct PreparedOp {
  OpKind kind = OpKind::Send;
  Order order = Order::OtherFirst;
  Buffer buf = Buffer::Out; ///< message slots, or the local operand
  Buffer src = Buffer::In;  ///< reduce, copy
  Buffer dst = Buffer::Out; ///< what the op writes (buf unless three-address)
  uint32_t chunk = 0, srcChunk = 0, dstChunk = 0, count = 1;
  uint32_t peer = 0;
  uint32_t seq = 0;  ///< message ends: index on the channel (k-th send a→b)
  uint32_t chan = 0; ///< message ends: index into PreparedRank::channels
  /// For each of buf, src, dst in tmp: index into PreparedRank::tmpChunks of
  /// the chunks its `count` slots hold (unknownChunk where not known).
  uint32_t bufIds = 0, srcIds = 0, dstIds = 0;
};

/// One channel the rank uses: its sends to `peer`, or its receives from it.
struct Channel {
  uint32_t peer = 0;
  bool send = false;
  uint32_t messages = 0; ///< the channel's length in one execution
  bool operator==(const Channel &) const = default;
};

struct PreparedRank {
  Shape shape;
  uint32_t rank = 0;
  std::vector<PreparedOp> ops;
  std::vector<uint32_t> predCount;       ///< per op
  std::vector<uint32_t> succBegin, succ; ///< successor lists, compressed rows
  std::vector<uint32_t> tmpChunks;
  /// The rank's channels, sorted by (peer, receives before sends).
  std::vector<Channel> channels;
  /// Messages on one channel, at most, over the programs the plan holds
  /// (every rank's in a whole plan: the same on every rank then, so a
  /// common tag base per execution, Executor::startAt(int), also works).
  uint32_t tagStride = 1;
  /// Messages on one of this rank's channels, at most.
  uint32_t longestChannel = 0;
  uint32_t messageOps = 0;
  /// Some op the executor runs uses a tmp slot whose chunk was not found
  /// (a plan that does not verify, or a partial plan without the sections
  /// the value passes through; missingSections says which).
  bool unknownTmp = false;
};

/// Prepares `rank` of a loaded (hence validated) plan.
/// Precondition: plan.runsOn(rank).
PreparedRank prepareRank(const LoadedPlan &plan, uint32_t rank);

/// For a partial plan whose own rank has tmp slots of unknown chunk: the
/// ranks without a section that those values cross to or from, in rank
/// order (adding their sections may resolve them); empty when nothing is
/// unknown or nothing more can help. Whole plans: empty.
std::vector<uint32_t> missingSections(const LoadedPlan &plan);

} // namespace collc::rt

#endif // COLLC_RUNTIME_CORE_PREPARED_H
