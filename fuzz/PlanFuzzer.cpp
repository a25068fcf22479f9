// fuzz/PlanFuzzer.cpp: libFuzzer target for the plan text reader, format v1 (scripts/fuzz plan).
//
// Each input is plan text. Properties: the reader (yaml-cpp's event parser,
// ir/YamlDoc, ir/PlanReader) never crashes or hits undefined behaviour
// (ASan/UBSan); a refusal is a `syntax` or `invalid` error positioned in the
// file (`fuzz.yaml:LINE:COL: syntax|invalid: `); an accepted plan is
// well-formed (ir/Plan.h: shape, one program per rank, every op in range) and
// its canonical text reads back to the same plan and prints to the same bytes.
#include "ir/PlanIO.h"

#include <cstdio>
#include <cstdlib>

using namespace collc;

namespace {

[[noreturn]] void fail(const char *what, const std::string &detail) {
  std::fprintf(stderr, "plan fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

/// "fuzz.yaml:" digits ":" digits ": " then the class.
bool positioned(const std::string &m, ir::ReadErrorKind kind) {
  const std::string prefix = "fuzz.yaml:";
  if (m.rfind(prefix, 0) != 0)
    return false;
  size_t i = prefix.size();
  for (int field = 0; field < 2; ++field) {
    const size_t start = i;
    while (i < m.size() && m[i] >= '0' && m[i] <= '9')
      ++i;
    if (i == start || i >= m.size() || m[i] != ':')
      return false;
    ++i;
  }
  const std::string cls = kind == ir::ReadErrorKind::Syntax ? " syntax: " : " invalid: ";
  return m.compare(i, cls.size(), cls) == 0 && m.size() > i + cls.size();
}

void expectPositioned(llvm::Error e) {
  llvm::handleAllErrors(
      std::move(e),
      [](const ir::PlanReadError &r) {
        std::string text;
        llvm::raw_string_ostream os(text);
        r.log(os);
        if (r.kind() == ir::ReadErrorKind::Io)
          fail("an I/O error from text in memory", os.str());
        if (!positioned(os.str(), r.kind()))
          fail("an error without a position or class", os.str());
      },
      [](const llvm::ErrorInfoBase &other) { fail("an error of another kind", other.message()); });
}

void expectWellFormed(const ir::Plan &p) {
  if (std::optional<ir::ShapeError> e = ir::checkShape(p.shape))
    fail("an accepted plan with a malformed shape", e->message);
  if (p.programs.size() != p.shape.ranks)
    fail("an accepted plan without one program per rank", std::to_string(p.programs.size()));
  for (uint32_t r = 0; r < p.shape.ranks; ++r)
    for (uint32_t i = 0; i < p.programs[r].ops.size(); ++i)
      if (std::optional<std::string> e = ir::checkOp(p.shape, r, p.programs[r].ops, i))
        fail("an accepted plan with a malformed op", *e);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::Expected<ir::Plan> plan =
      ir::parsePlan(llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.yaml");
  if (!plan) {
    expectPositioned(plan.takeError());
    return 0;
  }
  expectWellFormed(*plan);
  const std::string printed = ir::printPlan(*plan);
  llvm::Expected<ir::Plan> again = ir::parsePlan(printed, "printed.yaml");
  if (!again)
    fail("the printed text of an accepted plan does not read back",
         llvm::toString(again.takeError()) + "\n" + printed);
  if (!(*again == *plan))
    fail("the printed text reads back to a different plan", printed);
  if (ir::printPlan(*again) != printed)
    fail("printing is not canonical", printed);
  return 0;
}
