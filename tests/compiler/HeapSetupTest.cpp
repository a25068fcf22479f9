// tests/compiler/HeapSetupTest.cpp: prepareHeapForLargePlans, each case in a
// child process (the settings are the process's).
#include "compiler/HeapSetup.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) ||                        \
    __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define COLLC_UNDER_SANITIZER 1
#else
#define COLLC_UNDER_SANITIZER 0
#endif

namespace {

using collc::compiler::HeapSetup;
using collc::compiler::prepareHeapForLargePlans;

/// Runs `body` in a child; its exit status (0 = pass) is returned.
int inChild(const std::function<int()> &body) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0)
    _exit(body());
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

/// The VmFlags line of the mapping of /proc/self/smaps that holds `p`.
std::string vmFlagsOf(const void *p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) { // a mapping's first line
      inside = lo <= at && at < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0)
      return line;
  }
  return "";
}

TEST(HeapSetup, LargeBlocksComeFromAHeapAdvisedForHugePages) {
  if (COLLC_UNDER_SANITIZER)
    GTEST_SKIP() << "a sanitizer's allocator: prepareHeapForLargePlans does nothing";
  EXPECT_EQ(inChild([] {
              unsetenv("COLLC_HEAP");
              const HeapSetup s = prepareHeapForLargePlans();
              if (!s.tuned || s.reserved < (size_t(64) << 20)) {
                std::fprintf(stderr, "not set up: %s\n", s.why);
                return 1;
              }
              // 16 MiB blocks (an mmap of their own under glibc's defaults)
              // lie in the heap now: the first in its first 64 MiB, with
              // 4 KiB pages; the sixth past them, in a mapping advised for
              // huge pages.
              char *const top = static_cast<char *>(sbrk(0));
              void *b[6] = {};
              for (void *&x : b)
                x = std::malloc(size_t(16) << 20);
              for (void *x : b)
                if (!x || static_cast<char *>(x) >= top) {
                  std::fprintf(stderr, "a block is not in the reserved heap\n");
                  return 2;
                }
              const std::string first = vmFlagsOf(static_cast<char *>(b[0]) + (size_t(8) << 20));
              const std::string sixth = vmFlagsOf(static_cast<char *>(b[5]) + (size_t(8) << 20));
              for (void *x : b)
                std::free(x);
              if (s.advised == 0 || s.advised > s.reserved ||
                  sixth.find(" hg") == std::string::npos) {
                std::fprintf(stderr, "not advised: '%s'\n", sixth.c_str());
                return 3;
              }
              if (first.find(" hg") != std::string::npos) {
                std::fprintf(stderr, "advised in the first 64 MiB: '%s'\n", first.c_str());
                return 4;
              }
              return 0;
            }),
            0);
}

TEST(HeapSetup, ReservesAtMostAQuarterOfTheAddressSpaceLimit) {
  if (COLLC_UNDER_SANITIZER)
    GTEST_SKIP() << "a sanitizer's allocator: prepareHeapForLargePlans does nothing";
  EXPECT_EQ(inChild([] {
              rlimit lim{};
              getrlimit(RLIMIT_AS, &lim);
              lim.rlim_cur = rlim_t(2) << 30; // 2 GiB of address space
              if (setrlimit(RLIMIT_AS, &lim) != 0)
                return 10; // cannot test here
              const HeapSetup s = prepareHeapForLargePlans();
              if (!s.tuned)
                return 1;
              return s.reserved <= (size_t(512) << 20) && s.reserved > 0 ? 0 : 2;
            }),
            0);
}

TEST(HeapSetup, TooLittleAddressSpaceReservesNothing) {
  if (COLLC_UNDER_SANITIZER)
    GTEST_SKIP() << "a sanitizer's allocator: prepareHeapForLargePlans does nothing";
  EXPECT_EQ(inChild([] {
              rlimit lim{};
              getrlimit(RLIMIT_DATA, &lim);
              lim.rlim_cur = rlim_t(128) << 20; // a quarter is below the 64 MiB floor
              if (setrlimit(RLIMIT_DATA, &lim) != 0)
                return 10;
              const HeapSetup s = prepareHeapForLargePlans();
              if (s.reserved != 0 || std::strstr(s.why, "too little") == nullptr)
                return 1;
              // The process still allocates normally.
              void *b = std::malloc(size_t(8) << 20);
              std::free(b);
              return b ? 0 : 2;
            }),
            0);
}

TEST(HeapSetup, CollcHeapDefaultLeavesMallocAlone) {
  EXPECT_EQ(inChild([] {
              setenv("COLLC_HEAP", "default", 1);
              const HeapSetup s = prepareHeapForLargePlans();
              return !s.tuned && s.reserved == 0 && std::strstr(s.why, "COLLC_HEAP") ? 0 : 1;
            }),
            0);
}

} // namespace
