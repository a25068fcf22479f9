// compiler/passes/PassManager.cpp: the pass loop with verification after every pass.
#include "compiler/passes/PassManager.h"

#include "compiler/passes/Analysis.h"
#include "ir/PlanIO.h"

#include "llvm/Support/FormatVariadic.h"

#include <cassert>

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

bool PassManager::undoIfSlower(const Pass &pass, ir::Plan &before, ir::Plan &plan,
                               std::vector<double> &cost) const {
  if (!opts_.cost)
    return false;
  std::vector<double> now = opts_.cost(plan);
  if (pass.isSizeTradeoff()) {
    cost = std::move(now);
    return false;
  }
  assert(now.size() == cost.size() && "a cost has the same points every call");
  std::optional<size_t> worst; // the point where the result is slowest against the input
  for (size_t i = 0; i < now.size(); ++i)
    if (now[i] > cost[i] * (1 + 1e-9) &&
        (!worst || now[i] * cost[*worst] > now[*worst] * cost[i]))
      worst = i;
  if (!worst) {
    cost = std::move(now);
    return false;
  }
  if (opts_.undone)
    opts_.undone->push_back(
        llvm::formatv("{0}: predicted {1:f1} us against {2:f1} us before it{3}", pass.name(),
                      now[*worst] * 1e6, cost[*worst] * 1e6,
                      opts_.costPoint ? " " + opts_.costPoint(*worst) : std::string())
            .str());
  plan = std::move(before);
  return true;
}

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
  std::vector<double> cost;
  if (opts_.cost)
    cost = opts_.cost(plan);
  for (const std::unique_ptr<Pass> &pass : passes_) {
    ir::Plan before =
        (opts_.verifyEach && opts_.keepLastProven) || opts_.cost ? plan : ir::Plan{};
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
    if (!opts_.verifyEach) {
      undoIfSlower(*pass, before, plan, cost);
      continue;
    }
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
    if (undoIfSlower(*pass, before, plan, cost))
      continue; // the plan is the input again, and `last` still its proof
    last = std::move(r);
  }
  if (opts_.resultProof)
    *opts_.resultProof = std::move(last);
  return llvm::Error::success();
}

} // namespace collc::compiler
