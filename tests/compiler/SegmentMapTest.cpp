// tests/compiler/SegmentMapTest.cpp: runs stay maximal and cover every slot.
#include "compiler/SegmentMap.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

using collc::compiler::SegmentMap;

namespace {

std::vector<int> flatten(const SegmentMap<int> &m) {
  std::vector<int> v;
  m.visit(0, m.size(), [&](uint32_t b, uint32_t e, int x) { v.insert(v.end(), e - b, x); });
  return v;
}

TEST(SegmentMap, AssignSplitsAndMergesRuns) {
  SegmentMap<int> m(10, 0);
  m.assign(3, 6, 1);
  EXPECT_EQ(m.segments(), 3u);
  m.assign(6, 10, 1);
  EXPECT_EQ(m.segments(), 2u);
  m.assign(0, 3, 1);
  EXPECT_EQ(m.segments(), 1u);
  m.assign(4, 5, 2);
  EXPECT_EQ(flatten(m), (std::vector<int>{1, 1, 1, 1, 2, 1, 1, 1, 1, 1}));
  EXPECT_EQ(m.at(4), 2);
  EXPECT_EQ(m.at(5), 1);
}

TEST(SegmentMap, VisitClipsToTheRange) {
  SegmentMap<int> m(8, 7);
  m.assign(2, 4, 9);
  std::vector<std::tuple<uint32_t, uint32_t, int>> seen;
  m.visit(1, 3, [&](uint32_t b, uint32_t e, int x) { seen.emplace_back(b, e, x); });
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], std::make_tuple(1u, 2u, 7));
  EXPECT_EQ(seen[1], std::make_tuple(2u, 3u, 9));
}

TEST(SegmentMap, MatchesAFlatArrayUnderRandomAssignments) {
  std::mt19937 rng(42);
  for (int round = 0; round < 50; ++round) {
    uint32_t n = 1 + rng() % 40;
    SegmentMap<int> m(n, 0);
    std::vector<int> ref(n, 0);
    for (int k = 0; k < 200; ++k) {
      uint32_t b = rng() % n, e = b + 1 + rng() % (n - b);
      int v = int(rng() % 3);
      m.assign(b, e, v);
      std::fill(ref.begin() + b, ref.begin() + e, v);
      ASSERT_EQ(flatten(m), ref);
      // Runs are maximal: no two neighbours hold the same value.
      int prev = -1;
      size_t runs = 0;
      m.visit(0, n, [&](uint32_t, uint32_t, int x) {
        EXPECT_NE(x, prev);
        prev = x;
        ++runs;
      });
      EXPECT_EQ(runs, m.segments());
    }
  }
}

// Thousands of runs: blocks split, empty and merge across their borders.
TEST(SegmentMap, MatchesAFlatArrayWithManyRuns) {
  std::mt19937 rng(7);
  for (int round = 0; round < 4; ++round) {
    const uint32_t n = 3000;
    SegmentMap<int> m(n, 0);
    std::vector<int> ref(n, 0);
    for (int k = 0; k < 20000; ++k) {
      // Mostly short ranges (many runs), now and then a long one.
      uint32_t b = rng() % n;
      uint32_t len = k % 97 == 0 ? 1 + rng() % n : 1 + rng() % 4;
      uint32_t e = std::min(n, b + len);
      int v = int(rng() % (round + 2));
      m.assign(b, e, v);
      std::fill(ref.begin() + b, ref.begin() + e, v);
      if (k % 500 == 0 || k > 19990) {
        ASSERT_EQ(flatten(m), ref);
        size_t runs = 1;
        for (uint32_t i = 1; i < n; ++i)
          runs += ref[i] != ref[i - 1];
        EXPECT_EQ(runs, m.segments());
        for (uint32_t i = 0; i < n; i += 37)
          EXPECT_EQ(m.at(i), ref[i]);
        uint32_t vb = rng() % n, ve = vb + rng() % (n - vb + 1);
        std::vector<int> part;
        m.visit(vb, ve, [&](uint32_t rb, uint32_t re, int x) { part.insert(part.end(), re - rb, x); });
        EXPECT_EQ(part, std::vector<int>(ref.begin() + vb, ref.begin() + ve));
      }
    }
  }
}

// Flat mode reports exactly the runs segment mode does, whatever is assigned
// and visited (the verifier picks a mode per rank and must not see a
// difference).
TEST(SegmentMap, FlatModeVisitsTheSameRunsAsSegmentMode) {
  std::mt19937 rng(11);
  for (int round = 0; round < 40; ++round) {
    const uint32_t n = round % 5 == 0 ? 1 + rng() % 3 : 1 + rng() % 300;
    SegmentMap<int> seg, flat;
    seg.reset(n, 5);
    flat.reset(n, 5, /*flat=*/true);
    EXPECT_TRUE(flat.flat());
    EXPECT_FALSE(seg.flat());
    auto runsOf = [](const SegmentMap<int> &m, uint32_t b, uint32_t e) {
      std::vector<std::tuple<uint32_t, uint32_t, int>> v;
      m.visit(b, e, [&](uint32_t rb, uint32_t re, int x) { v.emplace_back(rb, re, x); });
      return v;
    };
    for (int k = 0; k < 400; ++k) {
      const uint32_t b = rng() % n, e = b + rng() % (n - b + 1);
      const int v = int(rng() % 4);
      seg.assign(b, e, v);
      flat.assign(b, e, v);
      const uint32_t vb = rng() % n, ve = vb + rng() % (n - vb + 1);
      ASSERT_EQ(runsOf(seg, vb, ve), runsOf(flat, vb, ve));
      ASSERT_EQ(seg.at(vb), flat.at(vb));
    }
    EXPECT_EQ(seg.segments(), flat.segments());
    // A reset switches modes and forgets the old contents.
    flat.reset(n, 9);
    EXPECT_FALSE(flat.flat());
    EXPECT_EQ(runsOf(flat, 0, n), (std::vector<std::tuple<uint32_t, uint32_t, int>>{{0, n, 9}}));
  }
}

TEST(SegmentMap, PreferFlatOnlyForShortAccessesToASmallMap) {
  // A ring: one slot per access, p slots, 4p accesses.
  EXPECT_TRUE(SegmentMap<int>::preferFlat(1024, 4096, 4096));
  // Halving-doubling: accesses of p/2 slots.
  EXPECT_FALSE(SegmentMap<int>::preferFlat(4096, 48, 48 * 2048));
  // A map far larger than its few accesses.
  EXPECT_FALSE(SegmentMap<int>::preferFlat(1u << 20, 100, 100));
}

} // namespace
