// runtime/core/Prepared.h: one rank's program, made ready to execute.
//
// Preparing is done once per (loaded plan, rank) and is independent of the
// element count: dependency counts and successor lists, the channel sequence
// number of every message end (from which tags derive), and the chunk each
// tmp slot holds at every op that touches tmp. The last needs the whole plan:
// tmp slots have room for any chunk, but chunks differ in size by up to one
// element, so a message from or to tmp must know which chunks it carries.
// For a verified plan that is static; it is found by replaying all ranks'
// programs in listing order, following messages (see Prepared.cpp).
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

/// The chunk held by slot `slot` of `rank`'s in / out buffer.
uint32_t inChunkOf(const Shape &s, uint32_t rank, uint32_t slot);
uint32_t outChunkOf(const Shape &s, uint32_t rank, uint32_t slot);

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
  uint32_t seq = 0; ///< message ends: index on the channel (k-th send a→b)
  /// For each of buf, src, dst in tmp: index into PreparedRank::tmpChunks of
  /// the chunks its `count` slots hold (unknownChunk where not known).
  uint32_t bufIds = 0, srcIds = 0, dstIds = 0;
};

struct PreparedRank {
  Shape shape;
  uint32_t rank = 0;
  std::vector<PreparedOp> ops;
  std::vector<uint32_t> predCount;       ///< per op
  std::vector<uint32_t> succBegin, succ; ///< successor lists, compressed rows
  std::vector<uint32_t> tmpChunks;
  /// Messages on one channel, at most (the same on every rank: tags are
  /// execution * tagStride + seq).
  uint32_t tagStride = 1;
  uint32_t messageOps = 0;
};

/// Prepares `rank` of a loaded (hence validated) plan.
/// Precondition: rank < plan.shape.ranks.
PreparedRank prepareRank(const LoadedPlan &plan, uint32_t rank);

} // namespace collc::rt

#endif // COLLC_RUNTIME_CORE_PREPARED_H
