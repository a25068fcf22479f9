// tests/ir/PlanReaderFuzzTest.cpp: whatever text the reader is given, it
// returns a well-formed plan or an error with a position — never a crash,
// never a malformed plan; and the reader's compact document (ir/YamlDoc.h)
// sees exactly the tree, marks and failures that YAML::Load does.
#include "ir/PlanBuilder.h"
#include "ir/PlanIO.h"
#include "ir/YamlDoc.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <functional>
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

/// The subset reader declines `text` (false) or reads the document
/// yaml-cpp's event parser reads (true).
bool subsetAgrees(const std::string &text) {
  std::unique_ptr<ir::yaml::Doc> fast = ir::yaml::Doc::parseSubset(text);
  if (!fast)
    return false;
  ir::yaml::SyntaxError error;
  std::unique_ptr<ir::yaml::Doc> events = ir::yaml::Doc::parseEvents(text, error);
  EXPECT_TRUE(events) << "the subset reader accepts what yaml-cpp refuses (" << error.message
                      << "):\n"
                      << text;
  if (events) {
    EXPECT_TRUE(ir::yaml::sameTree(fast->root(), events->root())) << "the readers differ:\n"
                                                                 << text;
  }
  return true;
}

TEST(YamlSubset, ReadsWhatYamlCppReadsOrDeclines) {
  // Each case: whether the subset reads it (the rest go to yaml-cpp).
  const std::pair<const char *, bool> cases[] = {
      {"a: 1\nb: [1, 2, {c: d}]\n", true},
      {"a: b c\nd: e   # comment\n", true},
      {"  a: 1\n  b:\n    - x\n    - {y: -1, z: [ ]}\n", true},
      {"a: null\nb: [Null, NULL, nil]\nnull: x\n", true},
      {"# head\n\n   # indented comment\na: 1 # ünïcödé in a comment\n", true},
      {"- {op: send, to: 1}\n- [0, 2]\n- 7\n", true},
      {"a: {}\nb: []\nc: {x: {y: {z: 1}}}\n", true},
      {"a: 1\na: 2\n", true},
      {"k: -1\nl: -x\nm: .5\nn: +3\no: a/b-c_d.e\n", true},
      {"a:\n  b:\n    c: 1\n  d: 2\ne: 3\n", true},
      {"a:\n- x\n", false},        // a sequence at its key's indentation
      {"a:\nb: 1\n", false},       // an empty value
      {"a: 1\n b: 2\n", false},    // an error
      {"a: b:c\n", false},         // ':' in a scalar
      {"a: [1, 2,]\n", false},     // a trailing comma
      {"a: [1,\n  2]\n", false},   // flow over two lines
      {"a: 'q'\n", false},         // quotes
      {"a: &x 1\nb: *x\n", false}, // anchors
      {"a: !t 1\n", false},        // tags
      {"a: |\n  text\n", false},   // block scalars
      {"---\na: 1\n", false},      // document markers
      {"a: 1\n---\nb: 2\n", false},
      {"%YAML 1.2\n---\na: 1\n", false},
      {"a:\t1\n", false},          // tabs
      {"a: 1\r\nb: 2\r\n", false}, // CR
      {"\xEF\xBB\xBF" "a: 1\n", false},
      {"a: 1 # \xff\n", false},    // not UTF-8
      {"a: {b}\n", false},         // a flow key without a value
      {"a: {b:1}\n", false},
      {"a: [b: 1]\n", false},
      {"- \n- x\n", false},
      {"-\n  x\n", false},
      {"- - x\n", false},
      {"- a: 1\n", false},
      {"a: -\n", false},
      {"a: - b\n", false},
      {"a: b#c\n", false},
      {"a:#c\n  b: 1\n", false},
      {"", false},
      {"# only a comment\n", false},
      {"plain\n", false},
      {"a: [x] y\n", false},
      {"a: ~\n", false},
      {"key with space: 1\n", false},
  };
  for (const auto &[text, read] : cases)
    EXPECT_EQ(subsetAgrees(text), read) << text;
}

TEST(YamlSubset, AgreesOnRandomEditsOfAPlan) {
  const std::string base = sampleText();
  ASSERT_TRUE(subsetAgrees(base));
  std::mt19937 rng(4242);
  size_t read = 0;
  for (int round = 0; round < 3000; ++round)
    read += subsetAgrees(randomEdit(base, rng));
  // Many edits stay inside the subset (digits, letters, spaces, comments).
  EXPECT_GT(read, 300u);
}

/// Calls `f(path, text)` for each file of the source tree's folder `dir`;
/// returns how many there were.
size_t forEachFile(const char *dir,
                   const std::function<void(const std::string &, llvm::StringRef)> &f) {
  size_t files = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(std::string(COLLC_SOURCE_ROOT) + dir, ec), end;
       !ec && it != end; it.increment(ec), ++files) {
    auto buf = llvm::MemoryBuffer::getFile(it->path());
    EXPECT_TRUE(bool(buf)) << it->path();
    if (buf)
      f(it->path(), (*buf)->getBuffer());
  }
  return files;
}

TEST(YamlSubset, ReadsEveryPlanCollcPrints) {
  // The fuzz corpus holds printed plans of every collective and shape.
  size_t printed = 0;
  forEachFile("/fuzz/corpus/plan", [&](const std::string &path, llvm::StringRef text) {
    llvm::Expected<ir::Plan> plan = ir::parsePlan(text, path);
    if (!plan) {
      llvm::consumeError(plan.takeError());
      return;
    }
    const std::string again = ir::printPlan(*plan);
    EXPECT_TRUE(subsetAgrees(again)) << path << "\n" << again;
    ++printed;
  });
  EXPECT_GE(printed, 20u);
}

TEST(YamlSubset, AgreesOnEveryCorpusFile) {
  size_t files = 0, read = 0;
  for (const char *dir : {"/fuzz/corpus/plan", "/fuzz/corpus/topology", "/fuzz/corpus/rules",
                          "/topologies", "/examples"})
    files += forEachFile(
        dir, [&](const std::string &, llvm::StringRef text) { read += subsetAgrees(text.str()); });
  EXPECT_GE(files, 40u);
  EXPECT_GE(read, 20u);
}

TEST(PlanReaderFuzz, RefusesDeepNestingWithoutOverflowingTheStack) {
  std::string text = "format: " + std::string(200000, '[');
  llvm::Expected<ir::Plan> p = ir::parsePlan(text, "deep.yaml");
  ASSERT_FALSE(p);
  EXPECT_NE(llvm::toString(p.takeError()).find("syntax: collections nested too deeply"),
            std::string::npos);
}

} // namespace
