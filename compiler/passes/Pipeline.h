// compiler/passes/Pipeline.h: the optimization levels and `optimize`, the public API.
//
//   -O0  nothing.
//   -O1  local clean-ups that keep every live message as it is: dce,
//        copy-elim, relax-deps, compact-scratch.
//   -O2  -O1 plus the passes that reshape messages: coalesce (before
//        relax-deps), and pipeline (after it) when pipelineSegments >= 2.
// Pipelining is off by default at every level: a plan is valid for every
// vector length n, and k segments trade k-1 extra message latencies for
// overlapping transfer and reduction, a win only for long vectors — the
// caller, who knows n, asks for it. (It also multiplies ops and scratch
// slots by k, which no other pass does.)
//
// In-place plans stay in-place: every pass checks its rewrites in the layout
// where `in` and `out` are one memory (passes/Analysis.h), which is race-free
// only if the separate layout is, so `in_place: true` is never dropped; a
// rewrite that would break it is not made.
// Every level keeps the plan's operand orders, hence its reduction trees:
// commutative: false stays correct, and identical results stay identical.
//
// The per-rank form (PipelineOptions::perRank; the drop-in compiles one
// rank's program this way, docs/design-notes.md) runs the same passes so
// that each pass's result on rank r depends only on the shape, rank r's
// program and, for coalesce, the programs of the ranks r exchanges messages
// with: dce keeps every message end (it removes local ops only), coalesce
// makes one round (a channel's merges are decided by its two ends), and
// compact-scratch lays out each rank on its own. Optimizing a plan that
// holds only some ranks' programs (the others empty) then gives rank r the
// program the whole plan's optimization gives it, provided r's peers'
// programs are there.
#ifndef COLLC_COMPILER_PASSES_PIPELINE_H
#define COLLC_COMPILER_PASSES_PIPELINE_H

#include "compiler/Verifier.h"
#include "compiler/passes/Pass.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace collc::compiler {

struct PipelineOptions {
  /// Optimization level 0..2, used when `passes` is empty.
  unsigned level = 2;
  /// A custom pipeline, by pass name, instead of the level's.
  std::vector<std::string> passes;
  /// Verify the input and the result of every pass (on by default).
  bool verifyEach = true;
  /// When set, print the plan after every pass that changed it.
  llvm::raw_ostream *printAfterAll = nullptr;
  /// Segments per message for `pipeline`: 0 = default (off at -O1/-O2,
  /// 4 when `pipeline` is named in `passes`), 1 = off, k >= 2 = k segments
  /// (at -O2 or when named).
  unsigned pipelineSegments = 0;
  /// With verifyEach: the caller's verify(plan) of the input and where the
  /// verification of the result goes (PassManagerOptions), so a caller that
  /// proves the input and the output does not repeat the pipeline's proofs.
  const VerifyResult *inputProof = nullptr;
  std::optional<VerifyResult> *resultProof = nullptr;
  /// The per-rank form of every pass (see above).
  bool perRank = false;
  /// A pass predicted slower by `cost` at any of its points is undone, and
  /// said so in `undone` (PassManagerOptions).
  std::function<std::vector<double>(const ir::Plan &)> cost;
  std::function<std::string(size_t)> costPoint;
  std::vector<std::string> *undone = nullptr;
};

/// A pass that `passes` may name.
struct PassInfo {
  llvm::StringRef name;
  llvm::StringRef summary;
  std::unique_ptr<Pass> (*create)(const PipelineOptions &opts);
};
/// Every pass, in the order -O2 runs them.
llvm::ArrayRef<PassInfo> passInfos();

/// The pass names `opts` runs, in order. Fails for an unknown pass name or a
/// level above 2.
llvm::Expected<std::vector<std::string>> pipelineFor(const PipelineOptions &opts);

/// Creates the pass `name` with `opts`' parameters, or nullptr if unknown.
std::unique_ptr<Pass> createPass(llvm::StringRef name, const PipelineOptions &opts);

/// Splits "a,b,c" into pass names (empty items are an error).
llvm::Expected<std::vector<std::string>> parsePassList(llvm::StringRef list);

/// Optimizes `plan` with the pipeline `opts` selects (an empty pipeline returns
/// it untouched, unverified). Precondition: the plan
/// is well-formed; with verifyEach it must verify (else an error), without it
/// the caller vouches that it does. Errors name the pass that broke the plan
/// and carry the verifier's diagnostics.
llvm::Expected<ir::Plan> optimize(ir::Plan plan, const PipelineOptions &opts);

} // namespace collc::compiler

#endif // COLLC_COMPILER_PASSES_PIPELINE_H
