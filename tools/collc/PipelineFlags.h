// tools/collc/PipelineFlags.h: the pass-pipeline options shared by
// `collc opt` and `collc compile` (one definition, both subcommands).
#ifndef COLLC_TOOLS_PIPELINEFLAGS_H
#define COLLC_TOOLS_PIPELINEFLAGS_H

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

/// Reports undone passes: a note on stderr each, and with `stats` (when the
/// passes were weighed) the count and lines in key: value form on `os`.
void reportUndone(const compiler::PipelineOptions &opts, const std::vector<std::string> &undone,
                  bool stats, llvm::raw_ostream &os);

} // namespace collc::tool

#endif // COLLC_TOOLS_PIPELINEFLAGS_H
