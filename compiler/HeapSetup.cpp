// compiler/HeapSetup.cpp: heap settings for processes that build large plans
// (compiler/HeapSetup.h says why).
#include "compiler/HeapSetup.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef __has_feature
#define __has_feature(x) 0
#endif

namespace collc::compiler {

namespace {

constexpr size_t hugePage = size_t(2) << 20;
constexpr size_t mib = size_t(1) << 20;
constexpr size_t smallHeap = 64 * mib;

/// How much heap growth to reserve: at most 8 GiB, half the machine's memory
/// and a quarter of what the process may map (a reservation counts against
/// RLIMIT_AS and RLIMIT_DATA although nothing is touched).
size_t reservationSize() {
  size_t r = size_t(8) << 30;
  const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0)
    r = std::min(r, size_t(pages) * size_t(pageSize) / 2);
  for (int which : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit lim{};
    if (getrlimit(which, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
      r = std::min(r, size_t(lim.rlim_cur) / 4);
  }
  return r / hugePage * hugePage;
}

} // namespace

HeapSetup prepareHeapForLargePlans() {
  HeapSetup s;
  if (const char *e = std::getenv("COLLC_HEAP"); e && std::strcmp(e, "default") == 0) {
    s.why = "COLLC_HEAP=default";
    return s;
  }
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) ||                        \
    __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                  \
    __has_feature(memory_sanitizer)
  s.why = "a sanitizer's allocator";
  return s;
#else
  // Blocks up to 32 MiB (glibc's largest threshold) come from the heap, and
  // freed memory stays there: a pass's vectors reuse the previous pass's pages.
  if (mallopt(M_MMAP_THRESHOLD, int(32 * mib)) != 1 || mallopt(M_TRIM_THRESHOLD, -1) != 1) {
    s.why = "mallopt refused the thresholds";
    return s;
  }
  s.tuned = true;

  // Reserve the heap's growth now, in steps of at most 1 GiB (malloc's top
  // padding), by allocating just past the heap's free top each time; then
  // advise huge pages for the whole range and give the blocks back. glibc
  // keeps them as its top chunk (trimming is off), untouched until used.
  const size_t want = reservationSize();
  if (want < 64 * mib) {
    s.why = "too little memory to reserve";
    return s;
  }
  const size_t step = std::min(want, size_t(1) << 30);
  if (mallopt(M_TOP_PAD, int(step)) != 1) {
    s.why = "mallopt refused the top padding";
    return s;
  }
  char *const start = static_cast<char *>(sbrk(0));
  std::vector<void *> blocks;
  blocks.reserve(want / step + 2);
  char *end = start;
  while (size_t(end - start) < want) {
    void *b = std::malloc(mallinfo2().keepcost + mib);
    char *now = static_cast<char *>(sbrk(0));
    if (!b || now <= end) { // not glibc's heap (or it cannot grow): stop
      std::free(b);
      break;
    }
    blocks.push_back(b);
    end = now;
  }
  // Later growth (past the reservation) in modest steps again.
  mallopt(M_TOP_PAD, int(64 * mib));
  // Huge pages past the first 64 MiB only: a plan that fits there (about
  // 300,000 ops) keeps 4 KiB pages, so its resident memory is what it uses,
  // not that rounded up to 2 MiB per region it touches.
  const uintptr_t first =
      (reinterpret_cast<uintptr_t>(start) + hugePage - 1) / hugePage * hugePage;
  const uintptr_t lo = first + smallHeap;
  const uintptr_t hi = reinterpret_cast<uintptr_t>(end) / hugePage * hugePage;
  if (hi > first)
    s.reserved = hi - first;
  if (hi > lo && madvise(reinterpret_cast<void *>(lo), hi - lo, MADV_HUGEPAGE) == 0)
    s.advised = hi - lo;
  // Last first: each block then merges into the top chunk as it is freed.
  for (auto b = blocks.rbegin(); b != blocks.rend(); ++b)
    std::free(*b);
  if (!s.reserved)
    s.why = "the heap could not be reserved";
  return s;
#endif
}

} // namespace collc::compiler
