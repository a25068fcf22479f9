// fuzz/LangFuzzer.cpp: libFuzzer target for the algorithm language (scripts/fuzz lang).
//
// Each input is an algorithm file. Properties: the lexer, parser and
// instantiator never crash or hit undefined behaviour (ASan/UBSan); a
// refusal is a positioned error (`file:line:col: error: `); a file that
// parses instantiates, for p = 1, 2, 3 and 5, into a well-formed plan or a
// positioned error, within a small budget; one rank's program alone equals
// that rank's program of the whole plan.
#include "lang/Instantiator.h"
#include "lang/Parser.h"

#include <cstdio>
#include <cstdlib>

using namespace collc;

namespace {

[[noreturn]] void fail(const char *what, const std::string &detail) {
  std::fprintf(stderr, "lang fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

/// A refusal must point at the file: "fuzz.calgo:LINE:COL: error: ...".
void expectPositioned(llvm::Error e) {
  const std::string text = llvm::toString(std::move(e));
  if (text.rfind("fuzz.calgo:", 0) != 0 || text.find(": error: ") == std::string::npos)
    fail("an error without a position", text);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::Expected<lang::Module> m =
      lang::parse(llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.calgo");
  if (!m) {
    expectPositioned(m.takeError());
    return 0;
  }
  for (uint32_t p : {1u, 2u, 3u, 5u}) {
    lang::InstantiateOptions o;
    o.ranks = p;
    o.root = p - 1;
    // At most 5 x 4000 + 4 x 2000 steps in all, so every input is quick.
    o.fuel = 4000;
    o.fuelPerRank = 0;
    o.fuelPerOp = 4;
    o.maxOps = 2000;
    llvm::Expected<ir::Plan> plan = lang::instantiate(*m, o);
    if (!plan) {
      expectPositioned(plan.takeError());
      continue;
    }
    if (std::optional<ir::ShapeError> e = ir::checkShape(plan->shape))
      fail("an instantiated plan with a malformed shape", e->message);
    for (uint32_t r = 0; r < p; ++r) {
      const auto &ops = plan->programs[r].ops;
      for (uint32_t i = 0; i < ops.size(); ++i)
        if (std::optional<std::string> e = ir::checkOp(plan->shape, r, ops, i))
          fail("an instantiated plan with a malformed op", *e);
      llvm::Expected<ir::Program> one = lang::instantiateRank(*m, o, r);
      if (!one)
        fail("a rank alone refused where the whole plan was not",
             llvm::toString(one.takeError()));
      if (!(*one == plan->programs[r]))
        fail("a rank alone differs from its program in the whole plan", std::to_string(r));
    }
  }
  return 0;
}
