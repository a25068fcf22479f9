// fuzz/RulesFuzzer.cpp: libFuzzer target for the drop-in's rules-file reader
// (COLLC_RULES, dropin/Config.cpp; scripts/fuzz rules).
//
// Each input is a rules file. Properties: the reader never crashes or hits
// undefined behaviour (ASan/UBSan); it fails exactly when it reports errors,
// then with no rules, every error naming `fuzz.yaml:LINE` (a line of the
// input) and at most 20 of them plus one "more errors" line; an accepted rule
// is in range (1 <= minRanks <= maxRanks, minBytes < maxBytes) and names an
// algorithm known for its collective; the accepted rules, written back as a
// rules file in the other of the two item styles, read back to the same
// rules. The input is also parsed as a byte range (the `bytes:` value and
// `collc bundle FILE@RANGE`): an accepted range prints and re-parses to itself.
#include "dropin/Config.h"
#include "runtime/bytecode/Bundle.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace collc;
using namespace collc::dropin;

namespace {

[[noreturn]] void fail(const char *what, const std::string &detail) {
  std::fprintf(stderr, "rules fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

const KnownAlgorithms &known() {
  static const KnownAlgorithms k = [] {
    KnownAlgorithms k;
    k.names[unsigned(Coll::Allreduce)] = {"binary_tree", "rabenseifner", "recursive_doubling",
                                          "ring", "ring-4.cplan"};
    k.names[unsigned(Coll::Reduce)] = {"binary_tree", "binomial"};
    return k;
  }();
  return k;
}

bool sameRules(const std::vector<Rule> &a, const std::vector<Rule> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].collective != b[i].collective || a[i].minRanks != b[i].minRanks ||
        a[i].maxRanks != b[i].maxRanks || a[i].minBytes != b[i].minBytes ||
        a[i].maxBytes != b[i].maxBytes || a[i].algorithm != b[i].algorithm)
      return false;
  return true;
}

/// The rules as a file: block items when `block`, else one-line flow items.
std::string write(const std::vector<Rule> &rules, bool block) {
  std::string s = "format: collc-rules/1\nrules:";
  if (rules.empty())
    return s + " []\n";
  s += "\n";
  for (const Rule &r : rules) {
    const std::string ranks = std::to_string(r.minRanks) + "-" +
                              (r.maxRanks == UINT32_MAX ? "" : std::to_string(r.maxRanks));
    const std::string fields[4][2] = {{"collective", name(r.collective)},
                                      {"ranks", ranks},
                                      {"bytes", rt::formatByteRange(r.minBytes, r.maxBytes)},
                                      {"algorithm", r.algorithm}};
    for (int f = 0; f < 4; ++f) {
      const std::string kv = fields[f][0] + ": " + fields[f][1];
      if (block)
        s += (f == 0 ? "  - " : "    ") + kv + "\n";
      else
        s += (f == 0 ? "  - {" : ", ") + kv + (f == 3 ? "}\n" : "");
    }
  }
  return s;
}

void checkRules(std::string_view text) {
  std::vector<Rule> rules;
  std::vector<std::string> errors;
  const bool ok = parseRules(text, "fuzz.yaml", known(), rules, errors);
  const size_t lines = size_t(std::count(text.begin(), text.end(), '\n')) + 1;
  if (ok != errors.empty())
    fail("the result and the errors disagree", errors.empty() ? "" : errors.front());
  if (!ok) {
    if (!rules.empty())
      fail("rules left after a failure", "");
    if (errors.size() > 21)
      fail("more than 20 errors and the overflow line", std::to_string(errors.size()));
    for (const std::string &e : errors) {
      if (e == "fuzz.yaml: (more errors not shown)")
        continue;
      size_t end = 0;
      unsigned long line = 0;
      if (e.rfind("fuzz.yaml:", 0) == 0)
        line = std::strtoul(e.c_str() + 10, nullptr, 10), end = e.find(": ", 10);
      if (line < 1 || line > lines || end == std::string::npos || end + 2 >= e.size())
        fail("an error without a line of the input", e);
    }
    return;
  }
  for (const Rule &r : rules) {
    if (r.minRanks < 1 || r.minRanks > r.maxRanks || r.minBytes >= r.maxBytes)
      fail("an accepted rule out of range", r.where);
    if (!known().contains(r.collective, r.algorithm))
      fail("an accepted rule with an unknown algorithm", r.where + " " + r.algorithm);
  }
  // Written back in each style: the same rules.
  for (bool block : {true, false}) {
    const std::string again = write(rules, block);
    std::vector<Rule> reread;
    std::vector<std::string> errors2;
    if (!parseRules(again, "again.yaml", known(), reread, errors2))
      fail("accepted rules written back do not read", again + errors2.front());
    if (!sameRules(rules, reread))
      fail("accepted rules written back read differently", again);
  }
}

void checkByteRange(std::string_view text) {
  uint64_t lo = 0, hi = 0;
  if (!rt::parseByteRange(text, lo, hi))
    return;
  if (lo >= hi)
    fail("an accepted byte range is empty", std::string(text));
  uint64_t lo2 = 0, hi2 = 0;
  const std::string printed = rt::formatByteRange(lo, hi);
  if (!rt::parseByteRange(printed, lo2, hi2) || lo2 != lo || hi2 != hi)
    fail("a byte range does not print and re-parse to itself",
         std::string(text) + " -> " + printed);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string_view text(reinterpret_cast<const char *>(data), size);
  checkRules(text);
  checkByteRange(text);
  return 0;
}
