// runtime/core/Scratch.h: the memory of an execution's buffers (tmp slots,
// receive staging, combiner scratch, copies of the input), kept mapped
// between executions.
//
// A call that cannot reuse its bound execution (a blocking call with a user
// operation or a derived datatype, every non-blocking call) binds a new one,
// and a buffer of a few MiB from malloc is mapped afresh each time: its pages
// fault and are zeroed by the kernel on every call, and glibc trims them again
// at free — about 3 ms per MiB of vector. Large buffers therefore come from a
// small per-thread pool that keeps the last few freed ones: the next execution
// of about the same size takes one back, already mapped. The pool holds at
// most `poolBlocks` blocks; a block is reused for a request of at least half
// its size, and the least recently freed goes when a new one would not fit.
// Small buffers come from malloc (cheap at those sizes).
#ifndef COLLC_RUNTIME_CORE_SCRATCH_H
#define COLLC_RUNTIME_CORE_SCRATCH_H

#include <cstddef>
#include <memory>

namespace collc::rt {

struct ScratchDelete {
  void operator()(char *p) const;
};
using ScratchPtr = std::unique_ptr<char[], ScratchDelete>;

/// Buffers of at least this many bytes are pooled.
inline constexpr size_t poolMinBytes = size_t(256) << 10;
/// Blocks a thread's pool keeps.
inline constexpr size_t poolBlocks = 4;

/// `bytes` bytes (at least 1), aligned to 64; null when memory is exhausted.
/// Free by destroying the pointer, on any thread: a pooled block joins the
/// pool of the thread that frees it.
ScratchPtr takeScratch(size_t bytes);

/// Blocks and bytes in the calling thread's pool (tests).
struct PoolState {
  size_t blocks = 0;
  size_t bytes = 0;
};
PoolState scratchPoolState();
/// Frees every block of the calling thread's pool.
void clearScratchPool();

} // namespace collc::rt

#endif // COLLC_RUNTIME_CORE_SCRATCH_H
