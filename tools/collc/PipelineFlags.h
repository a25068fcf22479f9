// tools/collc/PipelineFlags.h: the pass-pipeline options shared by
// `collc opt`, `compile`, `simulate` and `draw` (one definition).
#ifndef COLLC_TOOLS_PIPELINEFLAGS_H
#define COLLC_TOOLS_PIPELINEFLAGS_H

#include "tools/collc/AlgorithmFlags.h"

#include "compiler/passes/Pipeline.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace collc::tool {

/// The pipeline the command line asks for: -O, --passes, --pipeline-segments,
/// --print-after-all (to stderr), --no-verify-each. Errors are misuse.
llvm::Expected<compiler::PipelineOptions> pipelineOptionsFromFlags();

/// With --topology: weighs every pass on that machine (the simulator's times
/// at --cost-sizes) so that a pass predicted slower is undone, each such pass
/// a line in `undone`. Without it, nothing. Errors (a bad topology or size
/// list) are misuse.
llvm::Error weighPassesOnMachine(compiler::PipelineOptions &opts,
                                 std::vector<std::string> &undone);

/// The pipeline the flags ask for, weighed on --topology when given (its
/// `undone` lines in `undone`: keep the struct where it is while it runs).
struct FlagPipeline {
  compiler::PipelineOptions opts;
  std::vector<std::string> undone;
};

/// Fills `p` from the flags: Success, or Misuse after reporting (before any
/// input is read).
int pipelineFromFlags(FlagPipeline &p);

/// A plan as simulate and draw show it, and how it came.
struct ShownPlan {
  ir::Plan plan;
  std::string input;     ///< describe(form): "plan text", ...
  std::string optimized; ///< "-O2", "-O0", "--passes" or "as compiled"
};

/// The plan `input` names (loadPlan) as simulate and draw show it: a compiled
/// plan as compiled, else optimized by the pipeline flags (weighed on
/// --topology when given; at -O0 as written, also unproven), notes on passes
/// undone on stderr. Returns Success, or the exit code after reporting:
/// misuse, unreadable input, or the pipeline's refusal (Refused).
int loadShownPlan(llvm::StringRef input, ShownPlan &out);

/// Reports undone passes: a note on stderr each, and with `stats` (when the
/// passes were weighed) the count and lines in key: value form on `os`.
void reportUndone(const compiler::PipelineOptions &opts, const std::vector<std::string> &undone,
                  bool stats, llvm::raw_ostream &os);

} // namespace collc::tool

#endif // COLLC_TOOLS_PIPELINEFLAGS_H
