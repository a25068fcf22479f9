// tests/support/VerifyText.h: everything a verification result says, as text,
// for tests that compare two ways of proving one plan.
#ifndef COLLC_TESTS_SUPPORT_VERIFYTEXT_H
#define COLLC_TESTS_SUPPORT_VERIFYTEXT_H

#include "compiler/Verifier.h"

#include <string>

namespace collc::test {

/// The diagnostics in order, the dropped count, the in-place flag and the
/// statistics (not how the result was reached: `reordered`).
inline std::string describe(const compiler::VerifyResult &r) {
  std::string s;
  for (const compiler::Diagnostic &d : r.diagnostics)
    s += compiler::toString(d) + "\n";
  llvm::raw_string_ostream os(s);
  os << "dropped " << r.dropped << " aliasedByOrder " << r.aliasedByOrder << "\n";
  compiler::printStats(r.stats, os);
  return os.str();
}

} // namespace collc::test

#endif // COLLC_TESTS_SUPPORT_VERIFYTEXT_H
