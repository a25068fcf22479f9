// runtime/core/Executor.h: the dataflow interpreter of one rank's program.
//
// An Executor is bound once to buffers, an element count and a transport
// (allocating tmp, receive staging and combiner scratch then); each start()
// runs the program once more, allocating nothing: every op is posted as soon
// as its dependencies have completed, local ops run at once, message ends
// become transport requests, and test()/wait() progress them. Element
// offsets follow docs/plan-format.md: chunk c is [floor(c·n/C), floor((c+1)·n/C)) (or the
// blocked layout of MPI_Reduce_scatter, ChunkLayout); tmp slot s starts at s times the
// largest chunk and holds the chunk Prepared found for it.
#ifndef COLLC_RUNTIME_CORE_EXECUTOR_H
#define COLLC_RUNTIME_CORE_EXECUTOR_H

#include "runtime/core/Prepared.h"
#include "runtime/core/Scratch.h"
#include "runtime/core/Transport.h"

#include <memory>
#include <span>

namespace collc::rt {

/// The user's buffers for one rank.
struct Buffers {
  const void *in = nullptr; ///< may equal `out` (MPI_IN_PLACE)
  void *out = nullptr;      ///< null where the rank has no out (reduce, non-root)
  size_t count = 0;         ///< n: elements in the whole vector
  size_t extent = 0;        ///< bytes per element
  /// Blocked layout (MPI_Reduce_scatter): p + 1 prefix sums of the blocks'
  /// element counts, the last equal to `count`; must outlive the binding.
  /// Null: the uniform layout.
  const uint64_t *blockStart = nullptr;
  /// alltoallv: out's blocked layout (recvcounts), in's being `blockStart`
  /// (sendcounts); such a call's blocks are only ever moved from in to out
  /// (bind refuses tmp slots: their sizes are unknown). Null: as in.
  const uint64_t *outBlockStart = nullptr;
  /// Not negative: this rank knows the size of block `onlyBlock` alone (a
  /// gatherv's or scatterv's non-root); bind refuses a program that touches
  /// another block.
  int onlyBlock = -1;
  /// `count` 0 skips the run: every rank's count is 0 alike. Not so where
  /// a rank knows only its own blocks (gatherv, scatterv, alltoallv): it
  /// runs (messages of no bytes) as its peers, who may move data, do; nor
  /// in a barrier, whose zero-byte messages are the point.
  bool skipEmpty = true;
};

class Executor {
public:
  Executor() = default;
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;

  /// Binds `prep` (which must outlive the executor) to buffers, combiner and
  /// transport. Fails if the plan's tags do not fit the transport's range.
  [[nodiscard]] Status bind(const PreparedRank &prep, const Buffers &buffers,
                            Combiner combine, Transport &transport);

  /// Starts an execution whose k-th message on channel i (PreparedRank::
  /// channels) has tag channelBase[i] + k. Both ends of a channel must give
  /// it the same base, and executions in flight together on one
  /// communicator disjoint ranges [base, base + length) on each channel.
  /// Precondition: channelBase.size() == channels.size(), every range within
  /// 0..maxTag.
  [[nodiscard]] Status startAt(std::span<const int> channelBase);
  /// Starts an execution whose every channel's base is `tagBase`: tags
  /// [tagBase, tagBase + tagStride()), the same on every rank of a whole
  /// plan (its tagStride is the same everywhere).
  [[nodiscard]] Status startAt(int tagBase);
  /// Starts execution number `execution` of this plan alone on its
  /// communicator: each channel's tags cycle through its own windows.
  [[nodiscard]] Status start(uint64_t execution);
  /// startAt for a caller that waits for the execution at once (a blocking
  /// call): where bind() found every message short and the transport's
  /// direct path reaches every peer (DirectPath), the execution runs to
  /// its end here, the same ops in the same dataflow order with the same
  /// operands, through a small loop without requests; should the direct
  /// path not serve it (something else in flight, no free eager slot, a
  /// peer waiting for announcements) it continues, or starts, through
  /// requests, and wait() finishes it.
  [[nodiscard]] Status startBlocking(std::span<const int> channelBase);
  /// Whether startBlocking may take the direct path.
  bool direct() const { return direct_ != nullptr; }
  /// Executions startBlocking ran to their end on the direct path, and ones
  /// it handed over to requests midway (for tests).
  uint64_t directRuns() const { return directRuns_; }
  uint64_t handOvers() const { return handOvers_; }
  /// Tags one execution uses on one channel, at most, over the plan's programs.
  uint32_t tagStride() const { return prep_->tagStride; }
  /// Progresses without blocking; `done` tells whether the execution finished.
  [[nodiscard]] Status test(bool &done);
  /// Progresses until the execution finishes.
  [[nodiscard]] Status wait();


private:
  struct Piece {
    char *ptr;
    size_t elems;
  };
  struct Range {
    uint32_t begin = 0, size = 0; ///< into pieces_
    size_t elems = 0;
  };
  struct BoundOp {
    Range buf, src, dst;
    char *stage = nullptr; ///< recv_reduce, and messages of several pieces
    /// The transport hands this receive's data over in place (StreamSink):
    /// no stage; a recv copies it, a recv_reduce combines it straight from
    /// where it lies (fused receive-and-reduce).
    bool streamed = false;
  };

  Range bindRange(Buffer b, uint32_t chunk, uint32_t count, uint32_t ids);
  char *slotBase(Buffer b);
  [[nodiscard]] Status post(uint32_t op);
  void complete(uint32_t op);
  void finishMessage(uint32_t op);
  void runLocal(uint32_t op);
  /// dst = own ∘ other, or other ∘ own when `otherFirst` (the plan's order).
  void combineInOrder(const char *own, const char *other, char *dst, size_t n, bool otherFirst,
                      char *scratch);
  void combineInOrder(const char *own, const char *other, char *dst, size_t n, bool otherFirst) {
    combineInOrder(own, other, dst, n, otherFirst, scratch_.get());
  }
  /// A segment of a streamed receive (Transport::recvStream): elements
  /// [offset, offset + elems) of op `i`'s message, at `data`.
  void takeSegment(uint32_t i, const char *data, size_t offset, size_t elems);
  static void sinkThunk(void *self, uint32_t i, const char *data, size_t offset, size_t elems) {
    static_cast<Executor *>(self)->takeSegment(i, data, offset, elems);
  }
  [[nodiscard]] Status drainReady();
  /// The direct path of startBlocking (lock held from enter()).
  [[nodiscard]] Status runDirect();
  /// Gives the direct path up: sets the dataflow state from the ops `done`
  /// and `started` (bit masks), posts send `send` (unless none) and the
  /// `waiting` receives as requests, and goes on through requests.
  [[nodiscard]] Status handOver(uint32_t send, uint64_t done, uint64_t started,
                                uint64_t waiting);
  /// One round of test() (block = false) or wait() (block = true).
  [[nodiscard]] Status progressOnce(bool block);
  /// Ends the execution when `s` is a failure; returns `s`.
  [[nodiscard]] Status failed(Status &&s);

  const PreparedRank *prep_ = nullptr;
  Transport *transport_ = nullptr;
  Combiner combine_;
  Buffers bufs_;
  ChunkLayout layout_, outLayout_; ///< in's and tmp's; out's (alltoallv's own)
  size_t cap_ = 0; ///< elements per tmp slot
  bool unknownTmp_ = false; ///< bindRange met a tmp slot of unknown chunk
  bool unknownSize_ = false; ///< bindRange met a block whose size this rank does not know
  ScratchPtr tmp_, stage_, scratch_;
  /// Combiner scratch of streamed receives: segments may be taken on another
  /// thread (one progressing another execution on the communicator) while
  /// this one runs a local op with scratch_.
  ScratchPtr recvScratch_;
  std::vector<Piece> pieces_;
  std::vector<BoundOp> bound_;
  std::vector<uint32_t> roots_;
  // Per execution.
  std::vector<uint32_t> pending_, ready_, completed_;
  size_t doneOps_ = 0;
  bool running_ = false;
  std::vector<int> chanBase_; ///< this execution's tag base per channel
  /// The transport's direct path, where bind() found that it serves every
  /// message of the program (few ops, each message short, to a peer it reaches).
  DirectPath *direct_ = nullptr;
  /// What the direct path needs of each op, bound.
  struct DirectOp {
    OpKind kind = OpKind::Copy;
    uint32_t peer = 0, chan = 0, seq = 0;
    const char *data = nullptr; ///< sends
    size_t elems = 0;           ///< messages
    uint64_t preds = 0;         ///< bit k: op k must be done first
  };
  std::vector<DirectOp> directOps_;
  uint64_t directRuns_ = 0, handOvers_ = 0;
  [[nodiscard]] Status run();
};

} // namespace collc::rt

#endif // COLLC_RUNTIME_CORE_EXECUTOR_H
