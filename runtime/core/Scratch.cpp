// runtime/core/Scratch.cpp: pooled execution buffers (Scratch.h).
#include "runtime/core/Scratch.h"

#include <array>
#include <cstdlib>
#include <new>

namespace collc::rt {

namespace {

/// Every block starts with this header; the caller's bytes follow it.
struct alignas(64) Header {
  size_t capacity; ///< bytes after the header
};

char *userOf(Header *h) { return reinterpret_cast<char *>(h + 1); }
Header *headerOf(char *p) { return reinterpret_cast<Header *>(p) - 1; }

Header *allocate(size_t capacity) {
  void *raw = std::aligned_alloc(alignof(Header), sizeof(Header) + (capacity + 63) / 64 * 64);
  if (!raw)
    return nullptr;
  return new (raw) Header{capacity};
}

/// Set when the thread's pool has been destroyed (thread exit; on the main
/// thread before static destructors, which may still free buffers).
thread_local bool poolGone = false;

/// A thread's freed large blocks, most recently freed last.
class Pool {
public:
  ~Pool() {
    poolGone = true;
    clear();
  }

  /// The smallest kept block that fits `bytes` and is at most twice as
  /// large, taken out of the pool; null if none.
  Header *take(size_t bytes) {
    size_t best = used_;
    for (size_t i = 0; i < used_; ++i) {
      const size_t cap = blocks_[i]->capacity;
      if (cap >= bytes && cap / 2 <= bytes && (best == used_ || cap < blocks_[best]->capacity))
        best = i;
    }
    if (best == used_)
      return nullptr;
    Header *h = blocks_[best];
    for (size_t i = best + 1; i < used_; ++i)
      blocks_[i - 1] = blocks_[i];
    --used_;
    return h;
  }

  void give(Header *h) {
    if (used_ == blocks_.size()) { // the least recently freed goes
      std::free(blocks_[0]);
      for (size_t i = 1; i < used_; ++i)
        blocks_[i - 1] = blocks_[i];
      --used_;
    }
    blocks_[used_++] = h;
  }

  void clear() {
    for (size_t i = 0; i < used_; ++i)
      std::free(blocks_[i]);
    used_ = 0;
  }

  PoolState state() const {
    PoolState s;
    s.blocks = used_;
    for (size_t i = 0; i < used_; ++i)
      s.bytes += blocks_[i]->capacity;
    return s;
  }

private:
  std::array<Header *, poolBlocks> blocks_{};
  size_t used_ = 0;
};

Pool &pool() {
  thread_local Pool p;
  return p;
}

} // namespace

void ScratchDelete::operator()(char *p) const {
  if (!p)
    return;
  Header *h = headerOf(p);
  if (h->capacity >= poolMinBytes && !poolGone)
    pool().give(h);
  else
    std::free(h);
}

ScratchPtr takeScratch(size_t bytes) {
  if (bytes == 0)
    bytes = 1;
  Header *h = bytes >= poolMinBytes && !poolGone ? pool().take(bytes) : nullptr;
  if (!h)
    h = allocate(bytes);
  return ScratchPtr(h ? userOf(h) : nullptr);
}

PoolState scratchPoolState() { return poolGone ? PoolState{} : pool().state(); }

void clearScratchPool() {
  if (!poolGone)
    pool().clear();
}

} // namespace collc::rt
