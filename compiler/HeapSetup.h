// compiler/HeapSetup.h: heap settings for a process whose work is building
// and proving large plans (the collc tool, collc-scale-bench).
//
// A plan of millions of ops lives in a few hundred megabytes touched once,
// in vectors that grow, are freed and are allocated again pass after pass.
// With glibc's defaults every large block is a fresh mmap that is unmapped
// when freed, so each pass faults its memory in again, 4 KiB at a time; on
// a virtual machine whose page faults are slow this was half of `collc
// verify`'s time for ring at p = 1024 (docs/performance.md, "Compile and
// verify at scale"). prepareHeapForLargePlans() makes blocks up to 32 MiB come from
// the heap, keeps freed memory there for reuse, and reserves the heap's
// growth in advance with transparent huge pages advised for it past its
// first 64 MiB, so a large plan's memory is faulted in 2 MiB at a time and
// stays mapped, while a small one's resident memory is what it uses.
//
// Only for processes collc owns: never called by the drop-in or the C API,
// which run inside the user's program and leave its allocator alone.
#ifndef COLLC_COMPILER_HEAPSETUP_H
#define COLLC_COMPILER_HEAPSETUP_H

#include <cstddef>

namespace collc::compiler {

/// What prepareHeapForLargePlans did.
struct HeapSetup {
  bool tuned = false;       ///< malloc's thresholds were set
  size_t reserved = 0;      ///< bytes of heap reserved ahead
  size_t advised = 0;       ///< of them, advised for huge pages (past the first 64 MiB)
  const char *why = "";     ///< when nothing was done: the reason
};

/// Sets malloc's thresholds and reserves heap growth with huge pages advised
/// (see the file comment). Call once, early in main, before large
/// allocations. The reservation is address space only (pages are touched
/// on use) and is capped by the process's RLIMIT_AS / RLIMIT_DATA and the
/// machine's memory. Does nothing when COLLC_HEAP=default, or when the
/// allocator is not glibc's own heap (e.g. under a sanitizer).
HeapSetup prepareHeapForLargePlans();

} // namespace collc::compiler

#endif // COLLC_COMPILER_HEAPSETUP_H
