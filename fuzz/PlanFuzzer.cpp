// fuzz/PlanFuzzer.cpp: libFuzzer target for the plan text reader, format v1 (scripts/fuzz plan).
//
// Each input is plan text. Properties: the reader (the YAML subset's reader
// or yaml-cpp's event parser, ir/YamlDoc, ir/PlanReader) never crashes or hits
// undefined behaviour (ASan/UBSan); a refusal is a `syntax` or `invalid` error positioned in the
// file (`fuzz.yaml:LINE:COL: syntax|invalid: `); an accepted plan is
// well-formed (ir/Plan.h: shape, one program per rank, every op in range) and
// its canonical text reads back to the same plan and prints to the same bytes;
// where the subset reader reads the text, yaml-cpp reads the same document.
//
// Past the reader, plans are trusted ("validate at the edge"), so an accepted
// plan of modest size also goes down `collc compile`'s path: the verifier
// never crashes on it; a plan it proves optimizes at -O2 (every pass
// re-proven) and both plans lower to bytecode the loader accepts.
#include "compiler/Lower.h"
#include "compiler/Prove.h"
#include "compiler/passes/Pipeline.h"
#include "ir/PlanIO.h"
#include "ir/YamlDoc.h"
#include "runtime/bytecode/Loader.h"

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

/// The bytes lowered from `plan` load.
void expectLowers(const ir::Plan &plan, const rt::Proof &proof, const char *which) {
  const std::vector<uint8_t> bytes = compiler::lower(plan, proof);
  rt::LoadedPlan loaded;
  if (rt::Status s = rt::load(bytes, loaded); !s.ok())
    fail(which, s.message() + "\n" + ir::printPlan(plan));
}

/// Verifies, optimizes and lowers a plan the reader accepted.
void compile(ir::Plan plan) {
  size_t ops = 0;
  for (const ir::Program &p : plan.programs)
    ops += p.ops.size();
  if (plan.shape.ranks > 64 || plan.shape.chunks > 256 || plan.shape.scratch > 256 || ops > 2000)
    return;
  compiler::Proven proven = compiler::proveStrongest(plan);
  if (!proven.result.proven())
    return;
  expectLowers(plan, proven.proof, "a proven plan lowers to bytes the loader refuses");
  compiler::PipelineOptions o;
  o.level = 2;
  llvm::Expected<ir::Plan> optimized = compiler::optimize(plan, o);
  if (!optimized)
    fail("the optimizer breaks a proven plan",
         llvm::toString(optimized.takeError()) + "\n" + ir::printPlan(plan));
  expectLowers(*optimized, proven.proof, "an optimized plan lowers to bytes the loader refuses");
}

/// The subset reader of YAML declines `text` or reads what yaml-cpp reads.
void expectReadersAgree(llvm::StringRef text) {
  std::unique_ptr<ir::yaml::Doc> fast = ir::yaml::Doc::parseSubset(text);
  if (!fast)
    return;
  ir::yaml::SyntaxError error;
  std::unique_ptr<ir::yaml::Doc> events = ir::yaml::Doc::parseEvents(text, error);
  if (!events)
    fail("the subset reader accepts what yaml-cpp refuses", error.message);
  if (!ir::yaml::sameTree(fast->root(), events->root(), 64))
    fail("the subset reader and yaml-cpp read different documents", text.str());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  expectReadersAgree(text);
  llvm::Expected<ir::Plan> plan = ir::parsePlan(text, "fuzz.yaml");
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
  compile(std::move(*plan));
  return 0;
}
