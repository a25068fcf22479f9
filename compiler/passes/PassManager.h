// compiler/passes/PassManager.h: runs passes in order, proving the plan after each.
//
// Translation validation: with `verifyEach` the input is verified first and
// again after every pass, with the same guarantees (a plan whose ranks all
// compute the same reduction tree must keep doing so). The first pass whose
// result does not verify stops the run with an llvm::Error naming the pass
// and carrying the verifier's diagnostics, so a miscompile is never silent.
//
// With a cost (for example the simulator's times on a machine at a few
// sizes), a pass whose proven result costs more than its input at any of
// the cost's points is undone: the plan goes on as it was before the pass,
// and `undone` gets a line saying which pass and by how much. A pass that
// trades sizes by design and runs only when asked for (pipeline) is kept.
#ifndef COLLC_COMPILER_PASSES_PASSMANAGER_H
#define COLLC_COMPILER_PASSES_PASSMANAGER_H

#include "compiler/Verifier.h"
#include "compiler/passes/Pass.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace collc::compiler {

struct PassManagerOptions {
  /// Verify the input and the result of every pass (on by default).
  bool verifyEach = true;
  /// When set, print the plan (format v1) after every pass that changed it,
  /// preceded by `# *** after <pass> ***`.
  llvm::raw_ostream *printAfterAll = nullptr;
  /// With verifyEach: the caller's verify(plan) of the input (default
  /// options), so the input is not proven twice. Precondition: it is the
  /// verification of exactly this plan.
  const VerifyResult *inputProof = nullptr;
  /// With verifyEach: receives the verification of the result (the input's
  /// when no pass changed it), so the caller need not prove it again.
  std::optional<VerifyResult> *resultProof = nullptr;
  /// With verifyEach: keep a copy of the last proven plan to give back when a
  /// pass breaks it. A caller that drops the plan on an error (optimize)
  /// turns it off and saves a copy of the whole plan at the peak.
  bool keepLastProven = true;
  /// When set: the plan's predicted times at some points (the same points
  /// every call, the same count); a pass whose result is slower than its
  /// input at any point is undone.
  std::function<std::vector<double>(const ir::Plan &)> cost;
  /// Names the points of `cost` in messages ("at 1 MiB"); optional.
  std::function<std::string(size_t)> costPoint;
  /// Receives one line per undone pass: "relax-deps: predicted 1462 us
  /// against 793 us before it at 1 MiB".
  std::vector<std::string> *undone = nullptr;
};

/// An ordered list of passes.
class PassManager {
public:
  explicit PassManager(PassManagerOptions opts = {}) : opts_(opts) {}

  void add(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }

  /// Runs every pass on `plan`. Fails when the input does not verify or a
  /// pass breaks it (verifyEach); `plan` then holds the last proven version
  /// (with keepLastProven; without it, the broken one).
  llvm::Error run(ir::Plan &plan);

private:
  /// With a cost: undoes the pass whose result `plan` costs more than
  /// `cost` (the input's) at some point — `plan` becomes `before` and the
  /// pass is reported — or takes its cost as the new input's. True if undone.
  bool undoIfSlower(const Pass &pass, ir::Plan &before, ir::Plan &plan,
                    std::vector<double> &cost) const;

  PassManagerOptions opts_;
  std::vector<std::unique_ptr<Pass>> passes_;
};

} // namespace collc::compiler

#endif // COLLC_COMPILER_PASSES_PASSMANAGER_H
