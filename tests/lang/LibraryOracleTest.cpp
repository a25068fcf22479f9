// tests/lang/LibraryOracleTest.cpp: the library files equal the retired C++ generators.
//
// For p = 1..64 and every root, each algorithm file of schedules/ must
// instantiate to exactly the plan its C++ generator (tests/oracle) builds:
// the same shape, the same ops in the same order, the same steps. And one
// rank's program instantiated alone equals that rank's program of the whole
// plan (per-rank instantiation).
#include "lang/Instantiator.h"
#include "schedules/Generators.h"
#include "tests/oracle/Oracle.h"

#include <gtest/gtest.h>

namespace collc {
namespace {

/// Where two plans first differ, or "" when they are equal.
std::string firstDifference(const ir::Plan &got, const ir::Plan &want) {
  if (!(got.shape == want.shape))
    return "shapes differ (chunks " + std::to_string(got.shape.chunks) + " vs " +
           std::to_string(want.shape.chunks) + ", scratch " + std::to_string(got.shape.scratch) +
           " vs " + std::to_string(want.shape.scratch) + ")";
  if (got.algorithm != want.algorithm)
    return "algorithm names differ: " + got.algorithm + " vs " + want.algorithm;
  for (uint32_t r = 0; r < want.programs.size(); ++r) {
    const auto &g = got.programs[r].ops, &w = want.programs[r].ops;
    for (size_t i = 0; i < std::max(g.size(), w.size()); ++i) {
      if (i < g.size() && i < w.size() && g[i] == w[i])
        continue;
      auto text = [](const llvm::SmallVector<ir::Op, 0> &ops, size_t i) {
        return i < ops.size() ? ir::describe(ops[i]) + " step " + std::to_string(ops[i].step)
                              : std::string("nothing");
      };
      return "rank " + std::to_string(r) + ", op " + std::to_string(i) + ": got " +
             text(g, i) + ", want " + text(w, i);
    }
  }
  return "";
}

std::vector<uint32_t> allRoots(ir::Collective c, uint32_t p) {
  std::vector<uint32_t> roots;
  for (uint32_t root = 0; root < (ir::hasRoot(c) ? p : 1); ++root)
    roots.push_back(root);
  return roots;
}

TEST(LibraryOracle, EveryFileEqualsItsGeneratorForEveryRankCountAndRoot) {
  for (const oracle::Generator &g : oracle::generators()) {
    const sched::Algorithm *a = sched::findAlgorithm(g.collective, g.name);
    ASSERT_NE(a, nullptr) << g.name.str();
    for (uint32_t p = 1; p <= 64; ++p)
      for (uint32_t root : allRoots(g.collective, p)) {
        const ir::Plan want = g.build(oracle::GenOptions{p, root});
        llvm::Expected<ir::Plan> got = sched::generate(g.collective, g.name, {p, root});
        ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
        const std::string diff = firstDifference(*got, want);
        ASSERT_EQ(diff, "") << a->file.str() << " p = " << p << " root = " << root;
        ASSERT_TRUE(*got == want);
      }
  }
}

TEST(LibraryOracle, OneRankAloneEqualsThatRankOfTheWholePlan) {
  for (const sched::Algorithm &a : sched::algorithms())
    for (uint32_t p : {1u, 2u, 3u, 5u, 7u, 8u, 12u, 16u, 31u, 33u, 64u})
      for (uint32_t root : allRoots(a.collective, p)) {
        lang::InstantiateOptions o;
        o.ranks = p;
        o.root = root;
        llvm::Expected<bool> ok = lang::accepts(*a.module, o);
        ASSERT_TRUE(bool(ok)) << llvm::toString(ok.takeError());
        if (!*ok)
          continue;
        llvm::Expected<ir::Plan> whole = lang::instantiate(*a.module, o);
        ASSERT_TRUE(bool(whole)) << llvm::toString(whole.takeError());
        for (uint32_t r = 0; r < p; ++r) {
          llvm::Expected<ir::Program> one = lang::instantiateRank(*a.module, o, r);
          ASSERT_TRUE(bool(one)) << llvm::toString(one.takeError());
          ASSERT_TRUE(*one == whole->programs[r]) << a.file.str() << " p = " << p << " rank " << r;
          for (size_t i = 0; i < one->ops.size(); ++i)
            ASSERT_EQ(one->ops[i].loc.line, whole->programs[r].ops[i].loc.line);
        }
      }
}


TEST(LibraryOracle, OneRankAloneEqualsThatRankForEveryPAndAtScale) {
  // Every p in 1..64 (roots 0 and p-1), then at p = 4096 (roots 0 and p/2)
  // ranks 0, 1, p/2, p-1 and a few between, for every algorithm whose whole
  // plan stays under 2 M ops there (estimateOps).
  auto check = [](const sched::Algorithm &a, uint32_t p, uint32_t root,
                  llvm::ArrayRef<uint32_t> ranks) {
    lang::InstantiateOptions o;
    o.ranks = p;
    o.root = root;
    llvm::Expected<bool> ok = lang::accepts(*a.module, o);
    ASSERT_TRUE(bool(ok)) << llvm::toString(ok.takeError());
    if (!*ok)
      return;
    if (p > 64) {
      llvm::Expected<lang::OpEstimate> e = lang::estimateOps(*a.module, o);
      ASSERT_TRUE(bool(e)) << llvm::toString(e.takeError());
      if (e->ops > (uint64_t(2) << 20))
        return;
    }
    llvm::Expected<ir::Plan> whole = lang::instantiate(*a.module, o);
    ASSERT_TRUE(bool(whole)) << llvm::toString(whole.takeError());
    for (uint32_t r : ranks) {
      llvm::Expected<ir::Program> one = lang::instantiateRank(*a.module, o, r);
      ASSERT_TRUE(bool(one)) << llvm::toString(one.takeError());
      ASSERT_TRUE(*one == whole->programs[r])
          << a.file.str() << " p = " << p << " root = " << root << " rank " << r;
    }
  };
  for (const sched::Algorithm &a : sched::algorithms()) {
    for (uint32_t p = 1; p <= 64; ++p) {
      std::vector<uint32_t> all(p);
      for (uint32_t r = 0; r < p; ++r)
        all[r] = r;
      for (uint32_t root : {0u, p - 1})
        if (root == 0 || ir::hasRoot(a.collective))
          check(a, p, root, all);
    }
    const uint32_t p = 4096;
    const std::vector<uint32_t> sample = {0, 1, 2, 3, 777, 2047, 2048, 2049, 3001, 4094, 4095};
    check(a, p, 0, sample);
    if (ir::hasRoot(a.collective))
      check(a, p, p / 2, sample);
  }
}

} // namespace
} // namespace collc
