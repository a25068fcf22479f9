// tests/passes/OptimizedGoldenTest.cpp: the optimizer's and verifier's output, pinned.
//
// For every library algorithm at a fixed set of rank counts (and roots 0 and
// p-1 where the collective has one), the test builds the plan, proves it with
// the strongest properties (compiler/Prove.h), optimizes it at -O1, -O2 and
// -O2 with 3 pipeline segments, and records per case one line: the verifier's
// statistics of the input and of the result, the proof status, and xxHash64 of
// the result's canonical text and of its .cplan bytes. The lines must equal
// tests/passes/golden/optimized-plans.txt exactly: a change that makes the
// passes or the verifier faster must not change what they produce.
//
// Re-baseline after an intended change of the passes' output:
//   COLLC_GOLDEN_WRITE=1 build/bin/collc-pass-tests --gtest_filter='OptimizedGolden.*'
// (writes the file in the source tree; review the diff before committing).
#include "compiler/Lower.h"
#include "compiler/Prove.h"
#include "compiler/Verifier.h"
#include "compiler/passes/Pipeline.h"
#include "ir/PlanIO.h"
#include "schedules/Generators.h"

#include "llvm/Support/xxhash.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace collc::test {
namespace {

const char *const goldenPath = COLLC_SOURCE_DIR "/tests/passes/golden/optimized-plans.txt";

std::string hex(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string statsText(const compiler::PlanStats &s) {
  return "ops=" + std::to_string(s.ops) + " msgs=" + std::to_string(s.messages) +
         " moved=" + std::to_string(s.chunksMoved) + " scratch=" + std::to_string(s.scratch) +
         " path=" + std::to_string(s.criticalPath) + " identical=" + (s.identical ? "1" : "0");
}

/// One line per (algorithm, p, root, pipeline) case, in a fixed order.
std::vector<std::string> computeLines() {
  const std::vector<uint32_t> ranks = {1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 33, 64, 128};
  struct Level {
    unsigned level, segments;
    uint32_t maxRanks;
  };
  const std::vector<Level> levels = {{1, 0, 128}, {2, 0, 128}, {2, 3, 16}};
  std::vector<std::string> lines;
  for (const sched::Algorithm &a : sched::algorithms())
    for (uint32_t p : ranks) {
      std::vector<uint32_t> roots = {0};
      if (ir::hasRoot(a.collective) && p > 1)
        roots.push_back(p - 1);
      for (uint32_t root : roots) {
        sched::GenOptions g;
        g.ranks = p;
        g.root = root;
        if (!a.accepts(g))
          continue;
        ir::Plan base = a.build(g);
        const std::string head = (ir::name(a.collective) + " " + a.name).str() +
                                 " p=" + std::to_string(p) + " root=" + std::to_string(root);
        compiler::Proven proven = compiler::proveStrongest(base);
        if (!proven.result.proven()) {
          ADD_FAILURE() << head << ": not proven";
          continue;
        }
        lines.push_back(head + " -O0 " + statsText(proven.result.stats) +
                        " commutative=" + (base.shape.commutative ? "1" : "0") +
                        " in_place=" + (base.shape.inPlace ? "1" : "0"));
        for (const Level &l : levels) {
          if (p > l.maxRanks)
            continue;
          compiler::PipelineOptions o;
          o.level = l.level;
          o.pipelineSegments = l.segments;
          o.verifyEach = true;
          llvm::Expected<ir::Plan> opt = compiler::optimize(base, o);
          std::string what = head + " -O" + std::to_string(l.level) +
                             (l.segments ? " k=" + std::to_string(l.segments) : "");
          if (!opt) {
            ADD_FAILURE() << what << ": " << llvm::toString(opt.takeError());
            continue;
          }
          compiler::VerifyResult r = compiler::verify(*opt);
          const std::string text = ir::printPlan(*opt);
          const std::vector<uint8_t> bytes = compiler::lower(*opt, proven.proof);
          lines.push_back(what + " " + statsText(r.stats) + " text=" +
                          hex(llvm::xxHash64(text)) + " cplan=" +
                          hex(llvm::xxHash64(llvm::ArrayRef<uint8_t>(bytes))));
        }
      }
    }
  return lines;
}

TEST(OptimizedGolden, PassesAndVerifierOutputUnchanged) {
  const std::vector<std::string> got = computeLines();
  if (std::getenv("COLLC_GOLDEN_WRITE")) {
    std::ofstream out(goldenPath);
    for (const std::string &l : got)
      out << l << "\n";
    GTEST_SKIP() << "wrote " << got.size() << " lines to " << goldenPath;
  }
  std::ifstream in(goldenPath);
  ASSERT_TRUE(in) << "cannot read " << goldenPath;
  std::vector<std::string> want;
  for (std::string l; std::getline(in, l);)
    if (!l.empty())
      want.push_back(l);
  size_t mismatches = 0;
  for (size_t i = 0; i < std::max(got.size(), want.size()); ++i) {
    const std::string g = i < got.size() ? got[i] : "(none)";
    const std::string w = i < want.size() ? want[i] : "(none)";
    if (g != w && ++mismatches <= 10)
      ADD_FAILURE() << "line " << i + 1 << "\n  got:      " << g << "\n  expected: " << w;
  }
  EXPECT_EQ(mismatches, 0u) << "of " << want.size() << " golden lines";
  EXPECT_GT(want.size(), 500u);
}

} // namespace
} // namespace collc::test
