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
