// runtime/shm/ShmChannels.h: message channels between the ranks of one node
// in a shared-memory region, and the interpreter's transport over them.
//
// The region (laid out by formatRegion, mapped by every local rank) holds one
// channel per ordered pair of local ranks a -> b:
//
//   control   dataHead (a writes)  dataTail (b writes)       one cache line each
//             readyHead (b writes) readyTail (a writes)
//   ready     R entries {tag, bytes}: b announces a posted receive to a
//   slots     N slots of a header {tag, offset, bytes} and S payload bytes from byte 32
//             (a short payload shares the header's cache line); stride S + 64
//
// Protocol (docs/shm-transport.md):
// - A receive is announced: b writes {tag, bytes} into the ready ring and
//   publishes readyHead. A send streams only once its receive is announced,
//   so every segment in a data ring has a posted receive waiting for it: a
//   receiver never stashes a message, a sender never waits behind a message
//   nobody is receiving, and a plan that is deadlock-free with unbuffered
//   sends (what the verifier proves) is deadlock-free here.
// - A send streams its message in segments of at most S bytes (whole
//   elements): for each free slot it writes the header and the payload, then
//   publishes dataHead. The send completes when its last segment is written.
// - The receiver consumes segments in order, each by its tag: copies the
//   payload where the receive wants it (or hands it to the executor's sink,
//   which reduces it in place: ShmTransport::recvStream), then frees the slot
//   by publishing dataTail. The receive completes with its last segment.
// - Counters are 32-bit and wrap: a ring index is counter % N, fullness is
//   head - tail (mod 2^32). Fresh regions start them at 2^32 - 16 so that
//   every run crosses the wrap.
//
// Memory ordering: a writer fills an entry with plain stores, then publishes
// the counter with a release store; the reader loads the counter with
// acquire, then reads the entry; freeing (tail) is a release store the writer
// reads with acquire before reusing the slot. On x86-64 (TSO) these compile
// to plain moves; on weaker models (Arm, POWER) the acquire/release pairs are
// the barriers that keep payload writes ahead of the counter that publishes
// them, and slot reads ahead of the counter that frees them.
//
// Each process has one ShmEndpoint per communicator: the process-local state
// (posted sends and receives of every transport on that communicator,
// announcements not yet matched) behind one mutex, so that executions in
// flight together and threads progressing them share the channels safely.
#ifndef COLLC_RUNTIME_SHM_SHMCHANNELS_H
#define COLLC_RUNTIME_SHM_SHMCHANNELS_H

#include "runtime/core/Transport.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace collc::rt {

/// The geometry of a region, fixed by the rank that creates it.
struct ShmConfig {
  uint32_t slots = 8;             ///< N: slots per channel (a power of two)
  uint32_t slotBytes = 32 * 1024; ///< S: payload bytes per slot (a multiple of 64)
  uint32_t readyEntries = 64;     ///< R: announcements in flight per channel
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
  struct Peer {
    std::vector<SendOp> sends; ///< posted to this peer, in posting order
    std::vector<Ready> readies; ///< announced by the peer, no send posted yet
    std::vector<RecvOp> recvs;  ///< posted from this peer
    uint32_t unannounced = 0;
  };

  Channel &channel(uint32_t from, uint32_t to) const;
  char *slot(Channel &c, uint32_t index) const;
  /// One pass over every peer with work (caller holds mu_). False with
  /// `error` set when the peers break the protocol.
  bool progressLocked();
  void progressPeer(uint32_t q);
  void takeReadies(uint32_t q);
  void stream(uint32_t q);
  void consume(uint32_t q);
  void announce(uint32_t q);
  void forget(ShmTransport *owner);

  char *region_;
  uint32_t self_, localRanks_;
  ShmConfig config_;
  size_t channelBytes_;
  int spinsBeforeYield_;
  std::mutex mu_;
  std::vector<Peer> peers_;
  std::string error_; ///< set once the channels are unusable
};

/// The interpreter's transport for one execution: peers on this node go
/// through `endpoint`, the others through `remote` (MPI point-to-point).
class ShmTransport final : public Transport {
public:
  /// `localOf[r]` is rank r's local index in the endpoint's region, or -1
  /// when r is not on this node; it and `endpoint` must outlive the
  /// transport. `remote` serves the other peers (may be null when there are
  /// none). `elemSize` is the bytes per element.
  ShmTransport(ShmEndpoint &endpoint, const int32_t *localOf, Transport *remote,
               size_t elemSize, int maxTag);
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

private:
  friend class ShmEndpoint;
  Status post(void *data, size_t elems, uint32_t peer, int tag, uint32_t id);
  ShmEndpoint &ep_;
  const int32_t *localOf_;
  Transport *remote_;
  size_t elemSize_;
  int maxTag_;
  StreamSink sink_;
  uint32_t outstanding_ = 0; ///< local requests not yet reported complete
  std::vector<uint32_t> done_; ///< completed by the endpoint (under its mutex)
};

} // namespace collc::rt

#endif // COLLC_RUNTIME_SHM_SHMCHANNELS_H
