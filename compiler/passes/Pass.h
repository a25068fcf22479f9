// compiler/passes/Pass.h: the interface of a plan-to-plan pass and the factories.
//
// A pass rewrites a proven plan into one that computes the same collective
// and must be proven again: the pass manager (PassManager.h) runs the
// verifier after it. Passes are deterministic (same plan, same result) and,
// where a rewrite cannot be shown safe from the plan alone, skip it.
// Each pass's file opens with what it preserves.
#ifndef COLLC_COMPILER_PASSES_PASS_H
#define COLLC_COMPILER_PASSES_PASS_H

#include "ir/Plan.h"

#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <optional>
#include <vector>

namespace collc::compiler {

/// A plan-to-plan rewrite.
class Pass {
public:
  virtual ~Pass() = default;
  /// The name `--passes` and `--print-after-all` use ("relax-deps").
  virtual llvm::StringRef name() const = 0;
  /// Rewrites `plan` in place and returns true when it changed anything.
  /// Precondition: `plan` is proven (passes rely on race freedom and on
  /// message matching); a well-formed plan that is not must not crash it.
  virtual bool run(ir::Plan &plan) = 0;

  /// A pass that only replaces dependencies (relax-deps) says so, and gives
  /// them rank by rank (dependenciesOf) without changing the plan; the pass
  /// manager writes them itself, so every other field of every op provably
  /// stays as it was, and proves the result from the input's proof
  /// (verifyReordered). run() must do the same as writing them.
  virtual bool replacesDependenciesOnly() const { return false; }
  /// A pass that trades one size's time for another's by design (pipeline:
  /// segments cost latency, win bandwidth) and runs only when asked for is
  /// never undone by a cost (PassManagerOptions::cost): whoever asked for
  /// it — the tuner's segment candidates, --pipeline-segments — weighs it.
  virtual bool isSizeTradeoff() const { return false; }
  /// Rank r's new dependencies: per op, its predecessors (ascending).
  /// Precondition: replacesDependenciesOnly(), and r's program is not empty.
  virtual std::vector<llvm::SmallVector<uint32_t, 4>> dependenciesOf(const ir::Plan &plan,
                                                                     uint32_t r) {
    (void)plan;
    (void)r;
    return {};
  }
};

/// Removes ops whose results cannot reach a required output (`dce`). With
/// `keepMessages`, every message end stays: only local ops are removed.
std::unique_ptr<Pass> createDeadOpElimination(bool keepMessages = false);
/// Folds copies away: readers of a copy read its source, two-address combines
/// of the copy become three-address, producers write the copy's destination,
/// receives into scratch combine on arrival (`copy-elim`).
std::unique_ptr<Pass> createCopyElimination();
/// Replaces step barriers by the exact data dependencies (`relax-deps`).
std::unique_ptr<Pass> createDependencyRelaxation();
/// Merges messages between the same pair of ranks that are ready together
/// and cover adjacent slots at both ends (`coalesce`), in rounds until none
/// merges, or at most `maxRounds` rounds (0: no limit).
std::unique_ptr<Pass> createMessageCoalescing(unsigned maxRounds = 0);
/// Splits every op into `segments` pieces over `segments` times as many
/// chunks, with exact dependencies per piece (`pipeline`). Precondition:
/// segments >= 1 (1 leaves the plan as it is).
std::unique_ptr<Pass> createPipelining(uint32_t segments);
/// Reuses tmp slots whose lifetimes are already ordered, minimizing
/// `scratch` (`compact-scratch`). With `perRank`, each rank takes its own
/// compacted layout when it is smaller, whatever the other ranks need.
std::unique_ptr<Pass> createScratchCompaction(bool perRank = false);

} // namespace collc::compiler

#endif // COLLC_COMPILER_PASSES_PASS_H
