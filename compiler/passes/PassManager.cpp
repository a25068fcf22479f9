// compiler/passes/PassManager.cpp: the pass loop with verification after every pass.
#include "compiler/passes/PassManager.h"

#include "compiler/passes/Analysis.h"
#include "ir/PlanIO.h"

#include "llvm/Support/FormatVariadic.h"

namespace collc::compiler {

namespace {

/// "<what> (N errors):\n  <diagnostic>\n  ..." for an unproven plan.
std::string failure(llvm::StringRef what, const VerifyResult &r) {
  const size_t n = r.diagnostics.size() + r.dropped;
  std::string text = llvm::formatv("{0} ({1} error{2})", what, n, n == 1 ? "" : "s");
  for (const Diagnostic &d : r.diagnostics)
    text += "\n  " + toString(d);
  if (r.dropped)
    text += llvm::formatv("\n  ... and {0} more", r.dropped).str();
  return text;
}

} // namespace

llvm::Error PassManager::run(ir::Plan &plan) {
  VerifyOptions vo;
  std::optional<VerifyResult> last;
  if (opts_.verifyEach) {
    VerifyResult r = opts_.inputProof ? *opts_.inputProof : verify(plan, vo);
    if (!r.proven())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     failure("the input plan does not verify", r));
    // Keep what the input guarantees: identical results stay identical.
    vo.requireIdentical = r.stats.identical;
    last = std::move(r);
  }
  for (const std::unique_ptr<Pass> &pass : passes_) {
    ir::Plan before = opts_.verifyEach && opts_.keepLastProven ? plan : ir::Plan{};
    // A pass that only replaces dependencies: written here, rank by rank,
    // so nothing else of any op changes; then proven from the last proof.
    const bool reorders = opts_.verifyEach && pass->replacesDependenciesOnly();
    bool changed = false;
    if (reorders) {
      for (uint32_t r = 0; r < plan.programs.size(); ++r)
        if (!plan.programs[r].ops.empty())
          changed |= writeDeps(plan.programs[r].ops, pass->dependenciesOf(plan, r));
    } else {
      changed = pass->run(plan);
    }
    if (!changed)
      continue;
    if (opts_.printAfterAll) {
      *opts_.printAfterAll << "# *** after " << pass->name() << " ***\n";
      ir::printPlan(plan, *opts_.printAfterAll);
    }
    if (!opts_.verifyEach)
      continue;
    VerifyResult r = reorders ? verifyReordered(plan, vo, *last) : verify(plan, vo);
    if (!r.proven()) {
      if (opts_.keepLastProven)
        plan = std::move(before);
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          failure(llvm::formatv("pass '{0}' broke the plan: its result does not verify",
                                pass->name())
                      .str(),
                  r));
    }
    last = std::move(r);
  }
  if (opts_.resultProof)
    *opts_.resultProof = std::move(last);
  return llvm::Error::success();
}

} // namespace collc::compiler
