// tests/runtime/ScratchTest.cpp: pooled execution buffers (runtime/core/Scratch.h).
#include "runtime/core/Scratch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

using namespace collc::rt;

namespace {

bool aligned64(const char *p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

/// Each test starts from an empty pool.
void drain() { clearScratchPool(); }

} // namespace

TEST(Scratch, SmallBuffersAreAlignedUsableAndNotPooled) {
  drain();
  for (size_t bytes : {size_t(0), size_t(1), size_t(63), size_t(4096), poolMinBytes - 1}) {
    ScratchPtr p = takeScratch(bytes);
    ASSERT_TRUE(p) << bytes;
    EXPECT_TRUE(aligned64(p.get())) << bytes;
    std::memset(p.get(), 0xab, bytes ? bytes : 1);
  }
  EXPECT_EQ(scratchPoolState().blocks, 0u);
}

TEST(Scratch, AFreedLargeBufferIsTakenBackBySimilarSizes) {
  drain();
  const size_t mib = size_t(1) << 20;
  char *first = nullptr;
  {
    ScratchPtr p = takeScratch(4 * mib);
    ASSERT_TRUE(p);
    EXPECT_TRUE(aligned64(p.get()));
    std::memset(p.get(), 1, 4 * mib);
    first = p.get();
  }
  EXPECT_EQ(scratchPoolState().blocks, 1u);
  EXPECT_GE(scratchPoolState().bytes, 4 * mib);
  {
    ScratchPtr p = takeScratch(3 * mib); // at least half the block: reused
    EXPECT_EQ(p.get(), first);
    EXPECT_EQ(scratchPoolState().blocks, 0u);
  }
  {
    ScratchPtr big = takeScratch(5 * mib); // larger than the block: a new one
    EXPECT_NE(big.get(), first);
    ScratchPtr small = takeScratch(mib); // under half of it: a new one too
    EXPECT_NE(small.get(), first);
    EXPECT_EQ(scratchPoolState().blocks, 1u);
  }
  EXPECT_EQ(scratchPoolState().blocks, 3u);
}

TEST(Scratch, ThePoolKeepsTheMostRecentlyFreedBlocksOnly) {
  drain();
  std::vector<ScratchPtr> blocks;
  for (size_t i = 0; i < poolBlocks + 2; ++i)
    blocks.push_back(takeScratch(poolMinBytes * (i + 1)));
  char *last = blocks.back().get();
  blocks.clear(); // freed in order: the last poolBlocks stay
  EXPECT_EQ(scratchPoolState().blocks, poolBlocks);
  ScratchPtr again = takeScratch(poolMinBytes * (poolBlocks + 2));
  EXPECT_EQ(again.get(), last);
  ScratchPtr gone = takeScratch(poolMinBytes); // the first block was let go
  EXPECT_EQ(scratchPoolState().blocks, poolBlocks - 1);
}

TEST(Scratch, ABlockFreedOnAnotherThreadJoinsThatThreadsPool) {
  drain();
  ScratchPtr p = takeScratch(poolMinBytes * 2);
  size_t there = 0;
  std::thread t([&] {
    p.reset();
    there = scratchPoolState().blocks;
  });
  t.join();
  EXPECT_EQ(there, 1u);
  EXPECT_EQ(scratchPoolState().blocks, 0u);
}
