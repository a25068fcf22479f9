// tests/bytecode/CorpusTest.cpp: the committed fuzz seeds still load.
//
// Re-baseline after a format change with
//   build/bin/collc-make-loader-corpus fuzz/corpus/loader
#include "runtime/bytecode/Encoder.h"
#include "runtime/bytecode/Loader.h"
#include "tests/bytecode/LoaderCorpus.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

using namespace collc;

namespace {

std::vector<uint8_t> readFile(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

TEST(LoaderCorpus, EveryCommittedSeedLoadsAndReencodes) {
  size_t n = 0;
  for (const auto &entry : std::filesystem::directory_iterator(COLLC_LOADER_CORPUS)) {
    if (entry.path().extension() != ".cplan")
      continue;
    SCOPED_TRACE(entry.path().string());
    const std::vector<uint8_t> bytes = readFile(entry.path());
    rt::LoadedPlan plan;
    rt::Status s = rt::load(bytes, plan);
    ASSERT_TRUE(s.ok()) << s.message()
                        << " (re-baseline: build/bin/collc-make-loader-corpus fuzz/corpus/loader)";
    EXPECT_EQ(rt::encode(plan), bytes);
    ++n;
  }
  EXPECT_GE(n, 3u);
}

TEST(LoaderCorpus, HandMadeSeedIsUpToDate) {
  bool found = false;
  for (const auto &[name, bytes] : test::loaderCorpus()) {
    if (name == "encoding-paths.cplan") {
      found = true;
      EXPECT_EQ(readFile(std::filesystem::path(COLLC_LOADER_CORPUS) / name), bytes)
          << "re-baseline: build/bin/collc-make-loader-corpus fuzz/corpus/loader";
    }
  }
  EXPECT_TRUE(found) << "the hand-made seed encoding-paths.cplan is no longer generated";
}

} // namespace
