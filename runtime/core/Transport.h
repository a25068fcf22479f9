// runtime/core/Transport.h: what the interpreter needs from a message layer.
//
// The interpreter core knows nothing of MPI. A transport moves contiguous
// runs of elements between ranks, matching a send and a receive by
// (peer, tag); requests are named by the caller's ids and reported complete
// through poll(). MpiTransport (runtime/mpi) maps this onto MPI_Isend /
// MPI_Irecv / MPI_Testsome / MPI_Waitsome; ShmTransport (runtime/shm) moves
// messages between ranks of one node through shared memory; ThreadTransport
// runs p ranks as threads of one process for tests.
#ifndef COLLC_RUNTIME_CORE_TRANSPORT_H
#define COLLC_RUNTIME_CORE_TRANSPORT_H

#include "runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace collc::rt {

/// Takes the segments of a streamed receive (Transport::recvStream) as they
/// arrive: `elems` elements of request `id`'s message, starting at element
/// `offset`; segments arrive in order, each one whole elements. The data is
/// only valid during the call.
struct StreamSink {
  void (*fn)(void *ctx, uint32_t id, const char *data, size_t offset, size_t elems) = nullptr;
  void *ctx = nullptr;
};

/// What a transport offers for running a whole execution of short messages
/// without requests (Executor::startBlocking): ShmTransport's eager slots.
/// One thread uses it from enter() to leave(), holding the transport's lock
/// except inside pause(). Sends and receives here speak the transport's
/// usual protocol, so a peer may serve the same execution through requests.
class DirectPath {
public:
  /// Whether messages of `bytes` to or from `peer` can go this way.
  virtual bool reaches(uint32_t peer, uint64_t bytes) const = 0;
  /// Takes the lock; true when nothing is in flight on the transport's
  /// channels (else the lock is given back and the caller uses requests).
  virtual bool enter() = 0;
  virtual void leave() = 0;
  /// Gives the lock up for a moment (other threads progress), yielding the
  /// core after many idle rounds, and takes it again.
  virtual void pause(int idle) = 0;
  /// Sends at once (complete on return); false when it cannot (then post it
  /// with postSend).
  virtual bool trySend(const void *data, uint64_t bytes, uint32_t peer, int tag) = 0;
  /// Takes the message of `tag` from `peer` if it has arrived: the sink gets
  /// it as request `id`, and `done` is set.
  [[nodiscard]] virtual Status tryRecv(uint64_t bytes, uint32_t peer, int tag, uint32_t id,
                                       bool &done) = 0;
  /// Whether `peer` waits for receives to be announced (a short send of it
  /// could not go at once): receives from it must then be posted.
  virtual bool peerWaits(uint32_t peer) const = 0;
  /// Posts as Transport::send and recvStream do, under the held lock (the
  /// rest of the execution then goes through requests and poll()).
  [[nodiscard]] virtual Status postSend(const void *data, size_t elems, uint32_t peer, int tag,
                                        uint32_t id) = 0;
  [[nodiscard]] virtual Status postRecv(size_t elems, uint32_t peer, int tag, uint32_t id) = 0;

protected:
  ~DirectPath() = default;
};

class Transport {
public:
  virtual ~Transport() = default;

  /// Largest tag the transport accepts (MPI_TAG_UB).
  virtual int maxTag() const = 0;
  /// Posts a send of `elems` elements at `data` to `peer`. `id` names the
  /// request in completions; ids are below the `capacity` given to reset().
  [[nodiscard]] virtual Status send(const void *data, size_t elems, uint32_t peer, int tag,
                                    uint32_t id) = 0;
  /// Posts a receive of exactly `elems` elements into `data` from `peer`.
  [[nodiscard]] virtual Status recv(void *data, size_t elems, uint32_t peer, int tag,
                                    uint32_t id) = 0;
  /// Whether receives from `peer` can be streamed to the sink (recvStream):
  /// the transport then hands the message over where it lies (shared
  /// memory), and the receiver copies or reduces it from there in one pass.
  virtual bool streams(uint32_t /*peer*/) const { return false; }
  /// Posts a receive of exactly `elems` elements from `peer` whose data goes
  /// to the sink given by setSink(). Precondition: streams(peer).
  [[nodiscard]] virtual Status recvStream(size_t elems, uint32_t peer, int tag, uint32_t id);
  /// Where streamed receives deliver (called before they are posted).
  virtual void setSink(StreamSink) {}
  /// Appends the ids of requests that completed; with `block`, waits until
  /// at least one has (precondition: one is outstanding).
  [[nodiscard]] virtual Status poll(bool block, std::vector<uint32_t> &completed) = 0;
  /// Makes room for ids below `capacity`; called before an execution starts.
  virtual void reserve(uint32_t capacity) = 0;
  /// Gives up the requests still in flight (after an error); the transport
  /// may refuse further use.
  virtual void abandon() {}
  /// The direct path for short messages, or null.
  virtual DirectPath *direct() { return nullptr; }
};

/// dst = a ∘ b over n elements (the user's operation, a the left operand).
/// dst may be a or b, never overlapping them partially. `scratch` holds at
/// least n elements for combiners that need it.
struct Combiner {
  void (*fn)(const void *ctx, const void *a, const void *b, void *dst, size_t n,
             void *scratch) = nullptr;
  const void *ctx = nullptr;
  void operator()(const void *a, const void *b, void *dst, size_t n, void *scratch) const {
    fn(ctx, a, b, dst, n, scratch);
  }
};

inline Status Transport::recvStream(size_t, uint32_t, int, uint32_t) {
  return Status::error(ErrorCode::Unsupported, "this transport does not stream receives");
}

} // namespace collc::rt

#endif // COLLC_RUNTIME_CORE_TRANSPORT_H
