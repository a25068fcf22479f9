// tools/collc/PipelineFlags.h: the pass-pipeline options shared by
// `collc opt` and `collc compile` (one definition, both subcommands).
#ifndef COLLC_TOOLS_PIPELINEFLAGS_H
#define COLLC_TOOLS_PIPELINEFLAGS_H

#include "compiler/passes/Pipeline.h"

#include "llvm/Support/Error.h"

namespace collc::tool {

/// The pipeline the command line asks for: -O, --passes, --pipeline-segments,
/// --print-after-all (to stderr), --no-verify-each. Errors are misuse.
llvm::Expected<compiler::PipelineOptions> pipelineOptionsFromFlags();

} // namespace collc::tool

#endif // COLLC_TOOLS_PIPELINEFLAGS_H
