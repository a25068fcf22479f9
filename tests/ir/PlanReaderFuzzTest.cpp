// tests/ir/PlanReaderFuzzTest.cpp: whatever text the reader is given, it
// returns a well-formed plan or an error with a position — never a crash,
// never a malformed plan; and the reader's compact document (ir/YamlDoc.h)
// sees exactly the tree, marks and failures that YAML::Load does.
#include "ir/PlanBuilder.h"
#include "ir/PlanIO.h"
#include "ir/YamlDoc.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <optional>
#include <random>

using namespace collc;

namespace {

std::string sampleText() {
  ir::Shape s;
  s.ranks = 3;
  s.chunks = 3;
  s.scratch = 2;
  ir::PlanBuilder b(s, "sample");
  for (uint32_t r = 0; r < 3; ++r)
    b.copy(r, ir::out(0, 3), ir::in(0, 3));
  b.nextStep();
  b.send(0, 1, ir::out(0));
  b.recvReduce(1, 0, ir::out(0), ir::Order::OtherFirst);
  b.recv(2, 1, ir::tmp(1));
  b.send(1, 2, ir::in(1));
  b.nextStep();
  b.reduceInto(2, ir::in(2), ir::tmp(1), ir::tmp(0), ir::Order::BufFirst);
  uint32_t i = b.copy(2, ir::out(2), ir::tmp(0));
  b.setAfter(2, i, {0, 2});
  return ir::printPlan(b.take());
}

/// Every op of a parsed plan satisfies the IR's invariants.
void expectWellFormed(const ir::Plan &p, const std::string &text) {
  ASSERT_FALSE(ir::checkShape(p.shape)) << text;
  ASSERT_EQ(p.programs.size(), p.shape.ranks) << text;
  for (uint32_t r = 0; r < p.shape.ranks; ++r)
    for (uint32_t i = 0; i < p.programs[r].ops.size(); ++i)
      ASSERT_FALSE(ir::checkOp(p.shape, r, p.programs[r].ops, i)) << text;
  std::string printed = ir::printPlan(p);
  llvm::Expected<ir::Plan> again = ir::parsePlan(printed, "again.yaml");
  ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError()) << "\n" << printed;
  EXPECT_EQ(ir::printPlan(*again), printed);
}

/// `base` with one to four random one-character insertions, replacements or
/// deletions, drawn from characters that matter to YAML.
std::string randomEdit(const std::string &base, std::mt19937 &rng) {
  static const std::string alphabet =
      "{}[]:,-#\"'\n 0123456789abcdefghijklmnopqrstuvwxyz_&*!|>%@`\t";
  std::string text = base;
  int edits = 1 + int(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    size_t at = rng() % (text.size() + 1);
    char c = alphabet[rng() % alphabet.size()];
    switch (rng() % 3) {
    case 0:
      text.insert(text.begin() + long(at), c);
      break;
    case 1:
      if (at < text.size())
        text[at] = c;
      break;
    default:
      if (at < text.size())
        text.erase(text.begin() + long(at));
      break;
    }
  }
  return text;
}

TEST(PlanReaderFuzz, RandomEditsYieldAPlanOrAPositionedError) {
  const std::string base = sampleText();
  std::mt19937 rng(12345);
  size_t accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text = randomEdit(base, rng);
    llvm::Expected<ir::Plan> p = ir::parsePlan(text, "fuzz.yaml");
    if (!p) {
      std::string err = llvm::toString(p.takeError());
      EXPECT_EQ(err.rfind("fuzz.yaml:", 0), 0u) << err;
      EXPECT_TRUE(err.find(": syntax: ") != std::string::npos ||
                  err.find(": invalid: ") != std::string::npos)
          << err;
      continue;
    }
    ++accepted;
    expectWellFormed(*p, text);
  }
  // Some edits are harmless (comments, spaces), most are not.
  EXPECT_GT(accepted, 10u);
  EXPECT_LT(accepted, 2900u);
}

/// Compares a YamlDoc node with the YAML::Load node of the same text, down
/// to `depth` levels (aliases may make either a cycle).
void expectSameTree(ir::yaml::Node a, const YAML::Node &b, const std::string &text,
                    int depth = 8) {
  ASSERT_EQ(a.isNull(), b.IsNull()) << text;
  ASSERT_EQ(a.isScalar(), b.IsScalar()) << text;
  ASSERT_EQ(a.isSequence(), b.IsSequence()) << text;
  ASSERT_EQ(a.isMap(), b.IsMap()) << text;
  ASSERT_EQ(a.hasMark(), !b.Mark().is_null()) << text;
  if (a.hasMark()) {
    EXPECT_EQ(a.line(), b.Mark().line) << text;
    EXPECT_EQ(a.column(), b.Mark().column) << text;
  }
  if (b.IsScalar()) {
    EXPECT_EQ(a.scalar().str(), b.Scalar()) << text;
    EXPECT_EQ(a.plain(), b.Tag() == "?") << text;
  }
  if (depth == 0 || !(b.IsSequence() || b.IsMap()))
    return;
  ASSERT_EQ(a.size(), b.size()) << text;
  uint32_t i = 0;
  for (auto it = b.begin(); it != b.end(); ++it, ++i) {
    if (b.IsSequence()) {
      expectSameTree(a.element(i), *it, text, depth - 1);
    } else {
      expectSameTree(a.key(i), it->first, text, depth - 1);
      expectSameTree(a.value(i), it->second, text, depth - 1);
    }
  }
}

/// Parses `text` both ways: the same tree, or the same exception.
void expectSameAsLoad(const std::string &text) {
  std::optional<ir::yaml::Doc> doc;
  std::string docError, loadError;
  try {
    doc.emplace(text);
  } catch (const YAML::Exception &e) {
    docError = e.what();
  }
  YAML::Node loaded;
  try {
    loaded = YAML::Load(text);
  } catch (const YAML::Exception &e) {
    loadError = e.what();
  }
  ASSERT_EQ(docError, loadError) << text;
  if (docError.empty())
    expectSameTree(doc->root(), loaded, text);
}

TEST(YamlDoc, MatchesYamlLoadOnHandWrittenDocuments) {
  const char *cases[] = {
      "",
      "# only a comment\n",
      "~",
      "plain",
      "'quoted'",
      "!!int 7",
      "a: 1\nb: [1, 2, {c: d}]\n",
      "a: 1\na: 2\n", // duplicate keys stay, in order
      "? [complex, key]\n: v\n",
      "base: &b {x: 1}\nuse: *b\n",
      "self: &s [1, *s]\n", // a cycle through an alias
      "- &a x\n- *a\n- *a\n",
      "first: doc\n---\nsecond: doc\n",
      "k: |\n  block\n  text\nq: \"esc\\n\"\n",
      "k: v\n  bad: indent\n",
      "[unclosed",
      "*undefined",
      "a: {b: [c, {d: [e, f]}]}\n",
      ":\n",
      "- null\n- ~\n- \n- 'null'\n",
  };
  for (const char *text : cases)
    expectSameAsLoad(text);
}

TEST(YamlDoc, MatchesYamlLoadOnRandomEditsOfAPlan) {
  const std::string base = sampleText();
  expectSameAsLoad(base);
  std::mt19937 rng(777);
  for (int round = 0; round < 2000; ++round)
    expectSameAsLoad(randomEdit(base, rng));
}

TEST(PlanReaderFuzz, RefusesDeepNestingWithoutOverflowingTheStack) {
  std::string text = "format: " + std::string(200000, '[');
  llvm::Expected<ir::Plan> p = ir::parsePlan(text, "deep.yaml");
  ASSERT_FALSE(p);
  EXPECT_NE(llvm::toString(p.takeError()).find("syntax: collections nested too deeply"),
            std::string::npos);
}

} // namespace
