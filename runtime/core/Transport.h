// runtime/core/Transport.h: what the interpreter needs from a message layer.
//
// The interpreter core knows nothing of MPI. A transport moves contiguous
// runs of elements between ranks, matching a send and a receive by
// (peer, tag); requests are named by the caller's ids and reported complete
// through poll(). MpiTransport (runtime/mpi) maps this onto MPI_Isend /
// MPI_Irecv / MPI_Testsome / MPI_Waitsome; ThreadTransport runs p ranks as
// threads of one process for tests.
#ifndef COLLC_RUNTIME_CORE_TRANSPORT_H
#define COLLC_RUNTIME_CORE_TRANSPORT_H

#include "runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace collc::rt {

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
  /// Appends the ids of requests that completed; with `block`, waits until
  /// at least one has (precondition: one is outstanding).
  [[nodiscard]] virtual Status poll(bool block, std::vector<uint32_t> &completed) = 0;
  /// Makes room for ids below `capacity`; called before an execution starts.
  virtual void reserve(uint32_t capacity) = 0;
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

} // namespace collc::rt

#endif // COLLC_RUNTIME_CORE_TRANSPORT_H
