// runtime/shm/ShmChannels.h: message channels between the ranks of one node
// in a shared-memory region, and the interpreter's transport over them.
//
// The region (laid out by formatRegion, mapped by every local rank) holds one
// channel per ordered pair of local ranks a -> b:
//
//   control   dataHead (a writes)  dataTail (b writes)       one cache line each
//             readyHead (b writes) readyTail (a writes)
//             eagerAck[E] (b writes)  eagerWanted (a writes)
//   ready     R entries {tag, bytes}: b announces a posted receive to a
//   eager     E slots of a header {seq, tag, bytes} and up to P payload bytes from
//             byte 16 (an 8-byte message is one cache line); stride P + 16
//   slots     N slots of a header {tag, offset, bytes} and S payload bytes from byte 32
//             (a short payload shares the header's cache line); stride S + 64
//
// Protocol (docs/shm-transport.md):
// - Eager: a message of at most P bytes goes straight into a free eager slot
//   (payload, tag and size, then the slot's sequence number, released), and
//   the send completes at once. The receiver finds it by the changed
//   sequence number; if a posted receive has its tag it is delivered (copied,
//   or reduced from the slot by the sink) and the slot acknowledged
//   (eagerAck[i] = seq * 2 + whether that receive had been announced);
//   otherwise it stays in its slot until the receive is posted. The E slots
//   are the only buffering: when none is free, or a slot still holds an
//   unacknowledged message with the same tag, the send takes the rendezvous
//   path below. So nothing unbounded is stashed, and a send that cannot be
//   buffered waits for its receive exactly as an unbuffered send does.
// - Rendezvous: a receive is announced: b writes {tag, bytes} into the ready
//   ring and publishes readyHead. A receive of more than P bytes is announced
//   when it is posted; one of at most P bytes only while eagerWanted, the
//   count of a's short sends that could not go eagerly, is not 0 (b checks
//   it whenever it progresses), so that short messages normally cost no
//   announcement at all. A send that does not go eagerly streams
//   only once its receive is announced, so every segment in a data ring has
//   a posted receive waiting for it: a receiver never stashes a segment, a
//   sender never waits behind a message nobody is receiving, and a plan that
//   is deadlock-free with unbuffered sends (what the verifier proves) is
//   deadlock-free here.
// - A receive announced before its eager message arrived leaves a stale
//   announcement: the sender drops the first announcement with that tag
//   (an unacknowledged eager message of that tag, or one acknowledged with the
//   announced bit, owes one drop), before matching any send to it.
// - A send streams its message in segments of at most S bytes (whole
//   elements): for each free slot it writes the header and the payload, then
//   publishes dataHead. The send completes when its last segment is written.
// - The receiver consumes segments in order, each by its tag: copies the
//   payload where the receive wants it (or hands it to the executor's sink,
//   which reduces it in place: ShmTransport::recvStream), then frees the slot
//   by publishing dataTail. The receive completes with its last segment.
// - Counters are 32-bit and wrap: a ring index is counter % N, fullness is
//   head - tail (mod 2^32). Fresh regions start them at 2^32 - 16 (eager
//   sequence numbers, 31 bits, at 2^31 - 16) so that every run crosses the
//   wrap.
//
// Memory ordering: a writer fills an entry with plain stores, then publishes
// the counter with a release store; the reader loads the counter with
// acquire, then reads the entry; freeing (tail, eagerAck) is a release store
// the writer reads with acquire before reusing the slot. On x86-64 (TSO)
// these compile to plain moves; on weaker models (Arm, POWER) the
// acquire/release pairs are the barriers that keep payload writes ahead of
// the counter that publishes them, and slot reads ahead of the counter that
// frees them. The announced bit relies on the same chain: b publishes
// readyHead before it acknowledges, so a sender that sees the bit (acquire)
// also sees the announcement it must drop.
//
// Each process has one ShmEndpoint per communicator: the process-local state
// (posted sends and receives of every transport on that communicator,
// announcements not yet matched, eager slots in use) behind one mutex, so
// that executions in flight together and threads progressing them share the
// channels safely.
#ifndef COLLC_RUNTIME_SHM_SHMCHANNELS_H
#define COLLC_RUNTIME_SHM_SHMCHANNELS_H

#include "runtime/core/Transport.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include <sched.h>
#include <string>
#include <vector>

namespace collc::rt {

/// The geometry of a region, fixed by the rank that creates it.
struct ShmConfig {
  uint32_t slots = 8;             ///< N: slots per channel (a power of two)
  uint32_t slotBytes = 32 * 1024; ///< S: payload bytes per slot (a multiple of 64)
  uint32_t readyEntries = 64;     ///< R: announcements in flight per channel
  uint32_t eagerSlots = 8;        ///< E: eager slots per channel (0: no eager path; at most 16)
  uint32_t eagerBytes = 240;      ///< P: payload bytes per eager slot (P + 16 a multiple of 64)
};

/// Bytes a region for `localRanks` ranks takes.
size_t regionBytes(uint32_t localRanks, const ShmConfig &config);
/// Lays out a zeroed region of regionBytes() bytes (the creator, before any
/// other rank maps it).
void formatRegion(void *region, uint32_t localRanks, const ShmConfig &config);
/// Checks the header of a mapped region of `bytes` bytes for `localRanks`
/// ranks; on success fills `config` from it.
Status checkRegion(const void *region, size_t bytes, uint32_t localRanks, ShmConfig &config);

class ShmTransport;

/// One process's side of a region: local rank `self` of `localRanks`.
class ShmEndpoint {
public:
  /// `region` is mapped and checked (checkRegion); it must outlive the endpoint.
  ShmEndpoint(void *region, uint32_t self, uint32_t localRanks, const ShmConfig &config);
  ShmEndpoint(const ShmEndpoint &) = delete;
  ShmEndpoint &operator=(const ShmEndpoint &) = delete;

  uint32_t self() const { return self_; }
  uint32_t localRanks() const { return localRanks_; }
  const ShmConfig &config() const { return config_; }

  /// The control block at the start of each channel (ShmChannels.cpp).
  struct Channel;

private:
  friend class ShmTransport;
  struct SendOp {
    ShmTransport *owner;
    uint32_t id;
    int tag;
    const char *data;
    uint64_t bytes, done;
    uint32_t grain; ///< segment sizes are multiples of this (the element size)
    bool matched;
    bool wanted; ///< short, not eager: counted in eagerWanted until matched
  };
  struct RecvOp {
    ShmTransport *owner;
    uint32_t id;
    int tag;
    char *data; ///< null: streamed to the owner's sink
    uint64_t bytes, done;
    bool announced;
  };
  struct Ready {
    int tag;
    uint64_t bytes;
  };
  /// This rank's view of the eager slots of both channels with a peer.
  struct Eager {
    // Sending (channel self -> peer).
    uint32_t seq[16] = {};  ///< the sequence number last written into each slot
    int tag[16] = {};       ///< and its message's tag
    uint32_t busy = 0;      ///< slots written and not yet seen acknowledged
    uint32_t dropped = 0;   ///< busy slots whose stale announcement was dropped already
    uint32_t next = 0;      ///< where the search for a free slot starts
    std::vector<int> owed;  ///< tags of acknowledged messages whose announcement is still to drop
    // Receiving (channel peer -> self).
    uint32_t seen[16] = {}; ///< the sequence number last found in each slot
    uint32_t waiting = 0;   ///< slots holding a message no posted receive has taken yet
    uint32_t expect = 0;    ///< the slot the next message is likely in
  };
  struct Peer {
    std::vector<SendOp> sends; ///< posted to this peer, in posting order
    std::vector<Ready> readies; ///< announced by the peer, no send posted yet
    std::vector<RecvOp> recvs;  ///< posted from this peer
    uint32_t unannounced = 0;   ///< receives not announced yet
    uint32_t unannouncedShort = 0; ///< of which at most P bytes (announced only when wanted)
    uint32_t postedShort = 0;   ///< receives of at most P bytes in `recvs`
    uint32_t wanted = 0;        ///< this rank's value of eagerWanted towards the peer
    Eager eager;
  };

  Channel &channel(uint32_t from, uint32_t to) const;
  char *slot(Channel &c, uint32_t index) const;
  char *eagerSlot(Channel &c, uint32_t index) const;
  /// One pass over every peer with work (caller holds mu_). False with
  /// `error` set when the peers break the protocol.
  bool progressLocked();
  void progressPeer(uint32_t q);
  void takeReadies(uint32_t q);
  void stream(uint32_t q);
  void consume(uint32_t q);
  void announce(uint32_t q);
  /// Writes a message of at most P bytes into a free eager slot of the
  /// channel to q; false when none can take it (the rendezvous path then).
  bool sendEager(uint32_t q, const char *data, uint64_t bytes, int tag);
  /// Notes which busy eager slots to q the peer has acknowledged.
  void reapEager(uint32_t q);
  /// Looks for new eager messages from q and delivers those whose receive is
  /// posted. With `posted` (a receive just posted), true when that receive
  /// was served from a slot (it is then complete and not in the list).
  bool takeEager(uint32_t q, const RecvOp *posted = nullptr);
  /// Delivers eager slot `i` of the channel from q to receive `r`.
  void deliverEager(uint32_t q, uint32_t i, const RecvOp &r);
  void forget(ShmTransport *owner);
  /// A send no longer waits for an announcement (matched or abandoned).
  void unwant(uint32_t q, SendOp &s);
  /// Removes a receive from q's list, keeping the counts of unannounced ones.
  std::vector<RecvOp>::iterator dropRecv(uint32_t q, std::vector<RecvOp>::iterator it);
  /// Whether a message of `bytes` may go eagerly (and its receive waits to
  /// be asked before it is announced).
  bool shortMessage(uint64_t bytes) const { return eager_ && bytes <= eagerMax_; }
  /// Nothing posted, announced or broken on any channel (caller holds mu_).
  bool idle() const;

  /// The endpoint's lock: held for a few hundred instructions at a time and
  /// almost never contended (threads of one process), so a spinning
  /// exchange, with a yield for a holder that lost its core.
  class Lock {
  public:
    void lock() {
      int spins = 0;
      while (held_.exchange(true, std::memory_order_acquire))
        while (held_.load(std::memory_order_relaxed))
          if (++spins > 64)
            sched_yield();
    }
    void unlock() { held_.store(false, std::memory_order_release); }

  private:
    std::atomic<bool> held_{false};
  };

  char *region_;
  uint32_t self_, localRanks_;
  ShmConfig config_;
  size_t channelBytes_;
  size_t eagerOffset_, eagerStride_, slotsOffset_; ///< within a channel
  bool eager_;        ///< the region has eager slots
  uint64_t eagerMax_; ///< largest eager message: P bytes, or 0 without an eager path
  int spinsBeforeYield_;
  Lock mu_;
  std::vector<Peer> peers_;
  std::string error_; ///< set once the channels are unusable
};

/// The interpreter's transport for one execution: peers on this node go
/// through `endpoint`, the others through `remote` (MPI point-to-point).
///
/// Its direct path (DirectPath, Executor::startBlocking) runs a blocking
/// execution whose messages all go to and from this node's ranks and fit an
/// eager slot with the endpoint's lock held, without requests: a send is
/// sendEager, a receive takeEager for a receive not in the endpoint's lists
/// (its message waits in its slot until then, as for any receive posted
/// late). It is taken only while nothing else is in flight on the endpoint;
/// a send that finds no slot, or a peer that asks for announcements
/// (eagerWanted), hands the execution over to requests (postSend, postRecv),
/// so the channels see exactly what the request path would have done.
class ShmTransport final : public Transport, public DirectPath {
public:
  /// `localOf[r]` is rank r's local index in the endpoint's region, or -1
  /// when r is not on this node; it and `endpoint` must outlive the
  /// transport. `remote` serves the other peers (may be null when there are
  /// none). `elemSize` is the bytes per element. `direct`: offer the direct
  /// path (COLLC_SHM_FAST).
  ShmTransport(ShmEndpoint &endpoint, const int32_t *localOf, Transport *remote,
               size_t elemSize, int maxTag, bool direct = true);
  ~ShmTransport() override;

  int maxTag() const override { return maxTag_; }
  Status send(const void *data, size_t elems, uint32_t peer, int tag, uint32_t id) override;
  Status recv(void *data, size_t elems, uint32_t peer, int tag, uint32_t id) override;
  bool streams(uint32_t peer) const override { return localOf_[peer] >= 0; }
  Status recvStream(size_t elems, uint32_t peer, int tag, uint32_t id) override;
  void setSink(StreamSink sink) override { sink_ = sink; }
  Status poll(bool block, std::vector<uint32_t> &completed) override;
  void reserve(uint32_t capacity) override;
  void abandon() override;
  DirectPath *direct() override { return direct_ ? this : nullptr; }

  // DirectPath.
  bool reaches(uint32_t peer, uint64_t bytes) const override {
    return localOf_[peer] >= 0 && ep_.shortMessage(bytes) && elemSize_ <= ep_.config_.slotBytes;
  }
  bool enter() override;
  void leave() override { ep_.mu_.unlock(); }
  void pause(int idle) override;
  bool trySend(const void *data, uint64_t bytes, uint32_t peer, int tag) override;
  Status tryRecv(uint64_t bytes, uint32_t peer, int tag, uint32_t id, bool &done) override;
  bool peerWaits(uint32_t peer) const override;
  Status postSend(const void *data, size_t elems, uint32_t peer, int tag, uint32_t id) override;
  Status postRecv(size_t elems, uint32_t peer, int tag, uint32_t id) override {
    return postLocked(nullptr, elems, peer, tag, id);
  }

private:
  friend class ShmEndpoint;
  Status post(void *data, size_t elems, uint32_t peer, int tag, uint32_t id);
  /// send() and post() with the endpoint's lock held.
  Status sendLocked(const void *data, size_t elems, uint32_t q, int tag, uint32_t id);
  Status postLocked(void *data, size_t elems, uint32_t peer, int tag, uint32_t id);
  ShmEndpoint &ep_;
  const int32_t *localOf_;
  Transport *remote_;
  size_t elemSize_;
  int maxTag_;
  StreamSink sink_;
  uint32_t outstanding_ = 0; ///< local requests not yet reported complete
  bool direct_;
  std::vector<uint32_t> done_; ///< completed by the endpoint (under its mutex)
};

} // namespace collc::rt

#endif // COLLC_RUNTIME_SHM_SHMCHANNELS_H
