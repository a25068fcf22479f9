// tests/lang/RandomEditTest.cpp: random edits of valid files give a result or a positioned error.
//
// Each library file is edited at random — bytes replaced, deleted, duplicated,
// tokens swapped for others of the language — and parsed and instantiated for
// p = 1..5: every outcome is a plan that is well-formed or an error that
// starts with the file's name and a line and column. (The libFuzzer target
// fuzz/LangFuzzer.cpp does the same without a fixed seed; this test runs in
// every build.)
#include "lang/Instantiator.h"
#include "lang/Parser.h"
#include "schedules/Embedded.h"

#include <gtest/gtest.h>

#include <random>
#include <regex>

namespace collc {
namespace {

const char *const words[] = {"for", "in", "..", "{", "}", "(", ")", "[", "]", "step", "send",
                             "recv", "to", "from", "r", "p", "0", "-1", "**", "/", "%", "let",
                             "x", "=", "\n", "if", "else", "while", "fn", "out", "tmp", "in",
                             "by *", "reverse", "after [", "into", "buf_first", "?", ":",
                             "9223372036854775807", "require", "chunks", "\"", "#", ";"};

std::string edit(std::string text, std::mt19937 &rng) {
  const int edits = 1 + int(rng() % 3);
  for (int k = 0; k < edits && !text.empty(); ++k) {
    const size_t at = rng() % text.size();
    switch (rng() % 4) {
    case 0:
      text[at] = char(rng() % 128);
      break;
    case 1:
      text.erase(at, 1 + rng() % 8);
      break;
    case 2:
      text.insert(at, text.substr(rng() % text.size(), 1 + rng() % 16));
      break;
    default:
      text.insert(at, std::string(" ") + words[rng() % std::size(words)] + " ");
      break;
    }
  }
  return text;
}

TEST(LangRandomEdits, GiveAPlanOrAPositionedErrorNeverACrash) {
  std::mt19937 rng(20261202);
  const std::regex positioned("^edited\\.calgo:[0-9]+:[0-9]+: error: ");
  unsigned parsed = 0, refused = 0, plans = 0;
  for (const sched::EmbeddedFile &f : sched::embeddedFiles())
    for (int trial = 0; trial < 150; ++trial) {
      const std::string text = edit(f.text, rng);
      llvm::Expected<lang::Module> m = lang::parse(text, "edited.calgo");
      if (!m) {
        const std::string e = llvm::toString(m.takeError());
        EXPECT_TRUE(std::regex_search(e, positioned))
            << e;
        ++refused;
        continue;
      }
      ++parsed;
      for (uint32_t p = 1; p <= 5; ++p) {
        lang::InstantiateOptions o;
        o.ranks = p;
        o.root = p / 2;
        o.fuel = 40000; // per rank: about the 200000 steps in all of p = 5
        o.fuelPerRank = 0;
        o.fuelPerOp = 2;
        o.maxOps = 20000;
        llvm::Expected<ir::Plan> plan = lang::instantiate(*m, o);
        if (!plan) {
          const std::string e = llvm::toString(plan.takeError());
          EXPECT_TRUE(std::regex_search(e, positioned))
              << e;
          continue;
        }
        ++plans;
        EXPECT_FALSE(ir::checkShape(plan->shape).has_value());
        for (uint32_t r = 0; r < p; ++r)
          for (uint32_t i = 0; i < plan->programs[r].ops.size(); ++i)
            EXPECT_FALSE(ir::checkOp(plan->shape, r, plan->programs[r].ops, i).has_value());
      }
    }
  // The edits exercise both sides: some files still parse and instantiate.
  EXPECT_GT(parsed, 100u);
  EXPECT_GT(refused, 100u);
  EXPECT_GT(plans, 100u);
}

} // namespace
} // namespace collc
