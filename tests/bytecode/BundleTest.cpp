// tests/bytecode/BundleTest.cpp: the .cbundle reader and writer — round
// trips, the exact error for each rule, and corrupted files (every
// truncation, every byte flipped, random mutations with the checksum repaired
// so they reach the checks behind it): an error or a valid bundle, never a crash.
#include "runtime/bytecode/Bundle.h"

#include "compiler/Lower.h"
#include "runtime/bytecode/Loader.h"
#include "schedules/Generators.h"

#include <gtest/gtest.h>

#include <random>

using namespace collc;
using rt::Bundle;
using rt::BundleEntry;

namespace {

std::vector<uint8_t> planBytes(llvm::StringRef alg, uint32_t ranks,
                               ir::Collective c = ir::Collective::Allreduce, uint32_t root = 0) {
  sched::GenOptions o;
  o.ranks = ranks;
  o.root = root;
  llvm::Expected<ir::Plan> p = sched::generate(c, alg, o);
  EXPECT_TRUE(bool(p));
  if (!p) {
    llvm::consumeError(p.takeError());
    return {};
  }
  return compiler::lower(*p);
}

BundleEntry entry(std::vector<uint8_t> plan, uint64_t lo, uint64_t hi) {
  BundleEntry e;
  e.plan = std::move(plan);
  e.minBytes = lo;
  e.maxBytes = hi;
  return e;
}

std::vector<uint8_t> sampleBundle() {
  std::vector<uint8_t> out;
  rt::Status s = rt::writeBundle({entry(planBytes("recursive_doubling", 4), 0, 2048),
                                  entry(planBytes("rabenseifner", 4), 2048, rt::bundle::unbounded)},
                                 out);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

/// Rewrites the size field and the CRC so that a mutation reaches the later checks.
void repair(std::vector<uint8_t> &b) {
  if (b.size() < rt::bundle::headerSize + rt::bundle::checksumSize)
    return;
  rt::storeU32(b, rt::bundle::offSize, uint32_t(b.size()));
  rt::storeU32(b, b.size() - 4,
               rt::crc32(std::span<const uint8_t>(b.data(), b.size() - 4)));
}

std::string readError(const std::vector<uint8_t> &b) {
  Bundle out;
  rt::Status s = rt::readBundle(b, out);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(out.entries.empty()) << "a failed read leaves the bundle empty";
  return s.message();
}

} // namespace

TEST(Bundle, WritesAndReadsBack) {
  std::vector<uint8_t> bytes = sampleBundle();
  Bundle b;
  rt::Status s = rt::readBundle(bytes, b);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(b.collective, rt::Collective::Allreduce);
  EXPECT_EQ(b.ranks, 4u);
  ASSERT_EQ(b.entries.size(), 2u);
  EXPECT_EQ(b.entries[0].maxBytes, 2048u);
  EXPECT_EQ(b.entries[1].maxBytes, rt::bundle::unbounded);
  EXPECT_EQ(b.entries[1].plan, planBytes("rabenseifner", 4));
  EXPECT_EQ(b.plans[0].algorithm, "recursive_doubling");
  std::vector<uint8_t> again;
  ASSERT_TRUE(rt::writeBundle(b.entries, again).ok());
  EXPECT_EQ(again, bytes) << "writing is deterministic";
}

TEST(Bundle, ReducePlansForDifferentRootsMayShareRanges) {
  std::vector<uint8_t> out;
  rt::Status s = rt::writeBundle(
      {entry(planBytes("binomial", 5, ir::Collective::Reduce, 0), 0, rt::bundle::unbounded),
       entry(planBytes("binomial", 5, ir::Collective::Reduce, 3), 0, rt::bundle::unbounded)},
      out);
  ASSERT_TRUE(s.ok()) << s.message();
  Bundle b;
  ASSERT_TRUE(rt::readBundle(out, b).ok());
  EXPECT_EQ(b.plans[1].shape.root, 3u);
}

TEST(Bundle, WriterRefusesBadEntries) {
  std::vector<uint8_t> out;
  auto err = [&](std::vector<BundleEntry> e) {
    rt::Status s = rt::writeBundle(e, out);
    EXPECT_FALSE(s.ok());
    return s.message();
  };
  EXPECT_EQ(err({}), "a bundle needs at least one plan");
  EXPECT_EQ(err({entry(planBytes("ring", 4), 0, 100), entry(planBytes("ring", 4), 50, 200)}),
            "entries 0 (0-100) and 1 (50-200) overlap");
  EXPECT_EQ(err({entry(planBytes("ring", 4), 0, 10), entry(planBytes("ring", 3), 10, 20)}),
            "plan 1: the plan is for 3 ranks, the bundle for 4");
  EXPECT_EQ(err({entry(planBytes("ring", 4), 7, 7)}), "plan 0: empty byte range");
  EXPECT_EQ(err({entry({1, 2, 3}, 0, 1)}).rfind("plan 0: ", 0), 0u);
}

TEST(Bundle, NamesEachRuleItBreaks) {
  const std::vector<uint8_t> good = sampleBundle();
  EXPECT_EQ(readError({}), "the file is empty");
  EXPECT_EQ(readError({'x', 'y', 'z', 'w', 0}), "not a collc plan bundle (bad magic)");
  EXPECT_EQ(readError(planBytes("ring", 4)), "this is a compiled plan (.cplan), not a bundle");

  std::vector<uint8_t> b = good;
  b[rt::bundle::offVersion] = 2;
  EXPECT_EQ(readError(b), "bundle format version 2 is not supported: this reader reads version 1");

  b = good;
  b.push_back(0);
  EXPECT_EQ(readError(b).rfind("offset 0x8: trailing bytes", 0), 0u);
  b = good;
  b.resize(b.size() - 10);
  EXPECT_EQ(readError(b).rfind("offset 0x8: truncated", 0), 0u);

  b = good;
  b[rt::bundle::headerSize + 30] ^= 1;
  EXPECT_NE(readError(b).find("checksum mismatch"), std::string::npos);

  b = good;
  b[rt::bundle::offReserved] = 1;
  repair(b);
  EXPECT_EQ(readError(b), "offset 0x6: reserved bytes are not zero");

  b = good;
  b[rt::bundle::offCollective] = rt::numCollectives;
  repair(b);
  EXPECT_EQ(readError(b), "offset 0x5: unknown collective code 11");

  b = good;
  b[rt::bundle::offCollective] = uint8_t(rt::Collective::Reduce);
  repair(b);
  EXPECT_EQ(readError(b), "entry 0: the plan is for allreduce, the bundle for reduce");

  b = good;
  rt::storeU32(b, rt::bundle::offRanks, 0);
  repair(b);
  EXPECT_EQ(readError(b), "offset 0xc: ranks 0 out of range (1..1048576)");

  b = good;
  rt::storeU32(b, rt::bundle::offEntries, 5000);
  repair(b);
  EXPECT_EQ(readError(b), "offset 0x10: entry count 5000 out of range (1..1024)");

  b = good;
  rt::storeU32(b, rt::bundle::offEntries, 1000);
  repair(b);
  EXPECT_EQ(readError(b), "offset 0x14: the entry table (1000 entries) runs past the end of the file");

  // Entry 1's range made to overlap entry 0's: [0, 2048) and [1024, ...).
  b = good;
  rt::storeU32(b, rt::bundle::headerSize + rt::bundle::entrySize, 1024);
  repair(b);
  EXPECT_EQ(readError(b), "entries 0 (0-2K) and 1 (1K-) overlap");

  // An empty range.
  b = good;
  rt::storeU32(b, rt::bundle::headerSize + 8, 0);
  rt::storeU32(b, rt::bundle::headerSize + 12, 0);
  repair(b);
  EXPECT_EQ(readError(b), "offset 0x14: entry 0: empty byte range [0, 0)");

  // A plan offset that leaves a gap.
  b = good;
  rt::storeU32(b, rt::bundle::headerSize + rt::bundle::entrySize + 16,
               rt::readU32(&b[rt::bundle::headerSize + rt::bundle::entrySize + 16]) + 1);
  repair(b);
  EXPECT_NE(readError(b).find("entry 1: plan offset"), std::string::npos);

  // A corrupt plan inside: the loader's message, prefixed with the entry.
  b = good;
  const uint32_t off0 = rt::readU32(&b[rt::bundle::headerSize + 16]);
  b[off0 + 1] = 7; // the plan's version byte
  repair(b);
  EXPECT_EQ(readError(b).rfind("entry 0 (the plan at 0x44): ", 0), 0u);
}

TEST(Bundle, EveryTruncationIsAnError) {
  const std::vector<uint8_t> good = sampleBundle();
  for (size_t n = 0; n < good.size(); ++n) {
    std::vector<uint8_t> b(good.begin(), good.begin() + std::ptrdiff_t(n));
    Bundle out;
    EXPECT_FALSE(rt::readBundle(b, out).ok()) << n << " bytes";
    repair(b);
    EXPECT_FALSE(rt::readBundle(b, out).ok()) << n << " bytes, size and checksum repaired";
  }
}

TEST(Bundle, EveryFlippedByteIsAnErrorOrAValidBundle) {
  const std::vector<uint8_t> good = sampleBundle();
  for (size_t i = 0; i < good.size(); ++i)
    for (uint8_t mask : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xff)}) {
      std::vector<uint8_t> b = good;
      b[i] ^= mask;
      Bundle out;
      EXPECT_FALSE(rt::readBundle(b, out).ok()) << "byte " << i << " (the checksum catches it)";
      repair(b);
      if (rt::readBundle(b, out).ok()) { // a valid bundle re-encodes to the same bytes
        std::vector<uint8_t> again;
        ASSERT_TRUE(rt::writeBundle(out.entries, again).ok()) << "byte " << i;
        EXPECT_EQ(again, b) << "byte " << i;
      }
    }
}

TEST(Bundle, RandomMutationsNeverCrash) {
  const std::vector<uint8_t> good = sampleBundle();
  std::mt19937 rng(20240607);
  size_t accepted = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> b = good;
    const int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      switch (rng() % 4) {
      case 0:
        b[rng() % b.size()] = uint8_t(rng());
        break;
      case 1: // a u32 field set to an interesting value
        if (b.size() >= 4) {
          static const uint32_t vals[] = {0, 1, 2, 0x7fffffff, 0xffffffff, 24, 0x44, 1024};
          rt::storeU32(b, (rng() % (b.size() - 3)), vals[rng() % 8]);
        }
        break;
      case 2:
        b.erase(b.begin() + std::ptrdiff_t(rng() % b.size()));
        break;
      default:
        b.insert(b.begin() + std::ptrdiff_t(rng() % b.size()), uint8_t(rng()));
        break;
      }
      if (b.empty())
        b.push_back(0);
    }
    if (rng() % 4)
      repair(b);
    Bundle out;
    if (!rt::readBundle(b, out).ok())
      continue;
    ++accepted;
    // What the reader accepts, the writer could have written: the entries
    // meet every rule and survive a round trip.
    std::vector<uint8_t> again;
    ASSERT_TRUE(rt::writeBundle(out.entries, again).ok()) << "iteration " << iter;
    Bundle back;
    ASSERT_TRUE(rt::readBundle(again, back).ok()) << "iteration " << iter;
    ASSERT_EQ(back.entries.size(), out.entries.size());
    for (size_t i = 0; i < out.entries.size(); ++i) {
      EXPECT_EQ(back.entries[i].minBytes, out.entries[i].minBytes);
      EXPECT_EQ(back.entries[i].maxBytes, out.entries[i].maxBytes);
      EXPECT_EQ(back.entries[i].plan, out.entries[i].plan);
    }
  }
  // The repaired ones (three in four) often stay valid; most others do not.
  EXPECT_GT(accepted, 0u);
  EXPECT_LT(accepted, 20000u);
}

TEST(Bundle, ParsesByteRanges) {
  uint64_t lo = 1, hi = 1;
  ASSERT_TRUE(rt::parseByteRange("0-2K", lo, hi));
  EXPECT_EQ(lo, 0u);
  EXPECT_EQ(hi, 2048u);
  ASSERT_TRUE(rt::parseByteRange("1M-", lo, hi));
  EXPECT_EQ(lo, 1u << 20);
  EXPECT_EQ(hi, rt::bundle::unbounded);
  ASSERT_TRUE(rt::parseByteRange("-64k", lo, hi));
  EXPECT_EQ(lo, 0u);
  EXPECT_EQ(hi, 65536u);
  ASSERT_TRUE(rt::parseByteRange("-", lo, hi)); // all sizes
  EXPECT_EQ(lo, 0u);
  EXPECT_EQ(hi, rt::bundle::unbounded);
  ASSERT_TRUE(rt::parseByteRange("3-4G", lo, hi));
  EXPECT_EQ(hi, uint64_t(4) << 30);
  for (const char *bad : {"", "2K", "2K-1K", "5-5", "a-b", "1-2-3", "2KB-", "1 -2",
                          "99999999999999999999-"})
    EXPECT_FALSE(rt::parseByteRange(bad, lo, hi)) << bad;
  EXPECT_EQ(rt::formatByteRange(0, 2048), "0-2K");
  EXPECT_EQ(rt::formatByteRange(3 << 20, rt::bundle::unbounded), "3M-");
  EXPECT_EQ(rt::formatByteRange(1000, 1025), "1000-1025");
}
