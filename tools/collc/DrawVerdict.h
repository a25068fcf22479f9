// tools/collc/DrawVerdict.h: `collc verify --draw FILE`, the picture of a
// verified plan with the op its first diagnostic names marked.
#ifndef COLLC_TOOLS_DRAWVERDICT_H
#define COLLC_TOOLS_DRAWVERDICT_H

#include "compiler/Verifier.h"

#include "llvm/Support/Error.h"

namespace collc::tool {

/// An error when `path` names no picture format (.svg, .html).
llvm::Error checkDrawPath(llvm::StringRef path);

/// Draws `plan` to `path`, marking the op the first diagnostic of `result`
/// names and the ops its message refers to (a deadlock's cycle, a race's other
/// op). Returns false after reporting a write error. Precondition: `plan` is
/// well-formed.
bool drawVerdict(const ir::Plan &plan, const compiler::VerifyResult &result, llvm::StringRef path);

} // namespace collc::tool

#endif // COLLC_TOOLS_DRAWVERDICT_H
