// compiler/passes/Analysis.h: the facts about a plan that several passes share.
//
// This header holds a few small classes on purpose: the memory layout a rank's
// ops touch, the slots each op reads and writes, explicit dependency lists
// with ancestry and transitive reduction, the exact data dependencies of a
// listing, and message pairing. Every pass is built from them, and reading
// them side by side is how the passes agree on one memory model:
//  - a send reads its slots (until it completes, so anything that writes them
//    must be ordered after it), recv writes, recv_reduce reads and writes buf
//    (three-address: reads buf, writes dst), reduce reads src and buf and
//    writes buf (or dst), copy reads src and writes buf;
//  - in an in-place plan `in` and `out` are one memory (in slot c is out slot
//    c, for allgather out slot r·C/p + c), so a rewrite that is race-free in
//    this layout is race-free with the buffers separate too.
#ifndef COLLC_COMPILER_PASSES_ANALYSIS_H
#define COLLC_COMPILER_PASSES_ANALYSIS_H

#include "compiler/Clocks.h"
#include "ir/Plan.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <vector>

namespace collc::compiler {

// --- memory layout ---------------------------------------------------------------

/// A slot range in one rank's memory: `space` 0 is in, 1 out, 2 tmp, except
/// that `in` of an in-place plan lives in space 1 (aliased with out).
struct Place {
  uint8_t space = 0;
  uint32_t begin = 0, end = 0;
  bool overlaps(const Place &o) const {
    return space == o.space && begin < o.end && o.begin < end;
  }
};

/// Where the slots of one rank live.
class Layout {
public:
  /// Precondition: rank < shape.ranks.
  Layout(const ir::Shape &shape, uint32_t rank);
  Place place(const ir::Slots &s) const;
  /// Number of slots of a space (0 when the rank has no such buffer).
  uint32_t spaceSize(uint8_t space) const { return size_[space]; }
  /// True when `in` is aliased with `out` on this rank.

private:
  uint32_t size_[3] = {0, 0, 0};
  bool aliased_ = false;
  uint32_t aliasOffset_ = 0;
};

/// The slot ranges an op reads and the one it writes.
struct Accesses {
  llvm::SmallVector<ir::Slots, 2> reads;
  std::optional<ir::Slots> write;
};
Accesses accessesOf(const ir::Op &op);

/// How one program's ops use slots: the slot ranges they access and the
/// slots those cover, to choose a slot map's mode (SegmentMap::preferFlat).
struct SlotUse {
  uint64_t accesses = 0, slots = 0;
  /// Whether a map of `size` slots for these ops is kept flat.
  bool flat(uint64_t size) const;
};
SlotUse slotUse(llvm::ArrayRef<ir::Op> ops);

/// True when the op reads and writes the same range (two-address
/// recv_reduce or reduce).
inline bool isReadModifyWrite(const ir::Op &op) {
  return ir::hasOrder(op.kind) && !op.hasDst;
}

/// Resets the fields op.kind does not use (and the dependency fields that
/// op.deps does not use) to their defaults, so == compares meaning.
void normalize(ir::Op &op);

// --- dependencies -----------------------------------------------------------------

/// Explicit predecessor lists of one program, each sorted ascending; every
/// predecessor is smaller than its op.
using DepLists = std::vector<llvm::SmallVector<uint32_t, 4>>;

/// The dependency lists `step` and `after` describe.
DepLists explicitDeps(llvm::ArrayRef<ir::Op> ops);

/// Writes `deps` back as `after` lists (no dependencies: none). Returns true
/// when that changed any op.
bool writeDeps(llvm::MutableArrayRef<ir::Op> ops, const DepLists &deps);

/// Ancestry in a program's DAG (vector clocks, compiler/Clocks.h).
class Ancestry {
public:
  explicit Ancestry(const DepLists &deps);
  /// True when a is a strict ancestor of b (a path a → ... → b exists).
  bool before(uint32_t a, uint32_t b) const { return clocks_.before(a, b); }

private:
  Clocks clocks_;
};

/// Drops every edge implied by others (keeps reachability, so it never
/// changes what a plan means or how it runs). Sorts and deduplicates first.
/// Each op's list is reduced against the ancestry of the ops before it,
/// highest predecessor first: O(edges · kept · log) rather than O(ops²).
void reduceTransitively(DepLists &deps);

/// The data dependencies of `ops` in listing order: each op depends on the
/// last earlier op that writes a place it reads (read after write), on the
/// last writer and the readers since of each place it writes (write after
/// write, write after read), in rank `rank`'s layout; transitively reduced.
/// For a race-free program this is implied by its own dependencies. Slot
/// state is kept as runs of slots (compiler/SegmentMap.h), so a range op
/// costs O(log runs + runs it covers), not O(slots).
DepLists dataDeps(const ir::Shape &shape, uint32_t rank, llvm::ArrayRef<ir::Op> ops);

/// Deletes the ops with keep[i] false. An op that depended on a deleted op
/// inherits that op's dependencies, so every ordering among the kept ops
/// remains; the result is transitively reduced and written back as `after`.
void eraseOps(ir::Program &prog, DepLists deps, const std::vector<bool> &keep);

// --- messages ------------------------------------------------------------------------

/// One end of a message: op `op` of rank `rank`.
struct MsgEnd {
  uint32_t rank = 0, op = 0;
  bool operator==(const MsgEnd &) const = default;
};

/// The pairing of sends and receives: the k-th send a→b with the k-th receive
/// from a at b (docs/plan-format.md, "Message matching").
class Messages {
public:
  explicit Messages(const ir::Plan &plan);
  /// The matching end of a message op, or nullopt (not a message, bad peer,
  /// or no match).
  std::optional<MsgEnd> partner(uint32_t rank, uint32_t op) const;

private:
  std::vector<uint32_t> base_;
  std::vector<MsgEnd> partner_;
  std::vector<uint8_t> matched_;
};

} // namespace collc::compiler

#endif // COLLC_COMPILER_PASSES_ANALYSIS_H
