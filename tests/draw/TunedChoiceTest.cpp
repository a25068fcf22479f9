// tests/draw/TunedChoiceTest.cpp: reading collc tune's JSON report back — the
// JSON itself (escapes, numbers, nesting) and the ranges a picture looks up.
#include "tools/draw/TunedChoice.h"

#include <gtest/gtest.h>

using namespace collc;

namespace {

std::string report(const std::string &ranges, const std::string &extra = "") {
  return R"({"format": "collc-tune/1", "collective": "allreduce", "ranks": 4,
  "topology": "uni\u00b5 \"q\"", "dtype": "double", "elem_bytes": 8, "noncommutative": false,
  "budget": {"seconds": null, "exhausted": false, "note": ""}, )" +
         extra + R"(
  "choices": [{"bytes": 8, "winner": "recursive_doubling", "time": 2.0048e-06},
              {"bytes": 65536, "winner": "ring.seg2", "time": 2.18304E-5}],
  "ranges": )" + ranges + "}";
}

const char *tiling = R"([{"min_bytes": 0, "max_bytes": 6720, "plan": "recursive_doubling"},
    {"min_bytes": 6720, "max_bytes": null, "plan": "ring.seg2"}])";

std::string errorOf(const std::string &text) {
  llvm::Expected<draw::TunedChoice> t = draw::parseTunedChoice(text, "t.json");
  if (t) {
    ADD_FAILURE() << "expected an error";
    return "";
  }
  return llvm::toString(t.takeError());
}

} // namespace

TEST(TunedChoice, ReadsTheChoicesAndRangesAndIgnoresTheRest) {
  llvm::Expected<draw::TunedChoice> t = draw::parseTunedChoice(
      report(tiling, R"("candidates": [{"name": "x", "times": [1, -2.5e3, 0.0], "params": {}}],)"),
      "t.json");
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->ranks, 4u);
  EXPECT_EQ(t->topology, "uniµ \"q\"") << "\\u escapes become UTF-8";
  ASSERT_EQ(t->sizes.size(), 2u);
  EXPECT_DOUBLE_EQ(t->sizes[1].time, 2.18304e-5);
  EXPECT_EQ(t->rangeOf(0).plan, "recursive_doubling");
  EXPECT_EQ(t->rangeOf(6719).plan, "recursive_doubling");
  EXPECT_EQ(t->rangeOf(6720).plan, "ring.seg2");
  EXPECT_EQ(t->rangeOf(uint64_t(1) << 40).plan, "ring.seg2");
  ASSERT_TRUE(t->sizeAt(65536));
  EXPECT_EQ(t->sizeAt(65536)->winner, "ring.seg2");
  EXPECT_FALSE(t->sizeAt(4096));
}

TEST(TunedChoice, RefusesRangesThatDoNotTile) {
  EXPECT_NE(errorOf(report(R"([{"min_bytes": 1, "max_bytes": null, "plan": "a"}])"))
                .find("range 1..null does not continue the ranges before it (from 0)"),
            std::string::npos);
  EXPECT_NE(errorOf(report(R"([{"min_bytes": 0, "max_bytes": null, "plan": "a"},
                              {"min_bytes": 0, "max_bytes": null, "plan": "b"}])"))
                .find("does not continue"),
            std::string::npos);
  EXPECT_NE(errorOf(report(R"([{"min_bytes": 0, "max_bytes": 0, "plan": "a"}])"))
                .find("does not continue"),
            std::string::npos)
      << "an empty range";
  EXPECT_NE(errorOf(report(R"([{"min_bytes": 0, "max_bytes": 8, "plan": "a"}])"))
                .find("the last range must have no end"),
            std::string::npos);
  EXPECT_NE(errorOf(report(R"([{"min_bytes": 0, "max_bytes": 1.5, "plan": "a"}])"))
                .find("'max_bytes' (or null) must be a whole number"),
            std::string::npos);
}

TEST(TunedChoice, MalformedJsonNamesItsPosition) {
  EXPECT_EQ(errorOf("{\"a\": 1,\n  }"), "t.json:2:3: syntax: expected a key (a string) near '}'");
  EXPECT_EQ(errorOf("{\"a\": 01}"), "t.json:1:7: syntax: a number with a leading zero");
  EXPECT_EQ(errorOf("{\"a\": 1x}"), "t.json:1:8: syntax: expected ',' or '}' in an object near 'x}'");
  EXPECT_EQ(errorOf("{\"a\": 1.}"), "t.json:1:9: syntax: expected digits after '.'");
  EXPECT_EQ(errorOf("{\"a\": 1e}"), "t.json:1:9: syntax: expected digits in the exponent");
  EXPECT_EQ(errorOf("{\"a\": tru}"), "t.json:1:7: syntax: expected a JSON value near 'tru}'");
  EXPECT_EQ(errorOf("{\"a\": \"\\u12x4\"}"), "t.json:1:12: syntax: expected 4 hex digits after \\u");
  EXPECT_EQ(errorOf("{\"a\": \"x\ny\"}"), "t.json:1:9: syntax: a control character in a string");
  EXPECT_EQ(errorOf("[1 2]"), "t.json:1:4: syntax: expected ',' or ']' in an array near '2]'");
}
