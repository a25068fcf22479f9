// tools/collc/PipelineFlags.cpp: -O, --passes and friends for opt and compile.
#include "tools/collc/PipelineFlags.h"

#include "tools/collc/Commands.h"

#include "llvm/Support/raw_ostream.h"

namespace collc::tool {

namespace {
namespace cl = llvm::cl;
cl::opt<unsigned> optLevel("O", cl::Prefix, cl::desc("Optimization level 0..2 (default 2)"),
                           cl::value_desc("N"), cl::init(2), cl::sub(OptCommand()),
                           cl::sub(CompileCommand()), cl::cat(category()));
cl::opt<std::string> passes(
    "passes",
    cl::desc("Run these passes, in this order, instead of a level's (dce, copy-elim, "
             "coalesce, relax-deps, pipeline, compact-scratch)"),
    cl::value_desc("a,b,c"), cl::sub(OptCommand()), cl::sub(CompileCommand()),
    cl::cat(category()));
cl::opt<unsigned> segments(
    "pipeline-segments",
    cl::desc("Split every message into K segments (-O2 or --passes=pipeline; default: off "
             "at -O2, 4 for --passes=pipeline)"),
    cl::value_desc("K"), cl::init(0), cl::sub(OptCommand()), cl::sub(CompileCommand()),
    cl::cat(category()));
cl::opt<bool> printAfterAll("print-after-all",
                            cl::desc("Print the plan to stderr after each pass that changed it"),
                            cl::sub(OptCommand()), cl::sub(CompileCommand()),
                            cl::cat(category()));
cl::opt<bool> noVerifyEach("no-verify-each",
                           cl::desc("Do not prove the input and the result of every pass"),
                           cl::sub(OptCommand()), cl::sub(CompileCommand()),
                           cl::cat(category()));
} // namespace

llvm::Expected<compiler::PipelineOptions> pipelineOptionsFromFlags() {
  compiler::PipelineOptions opts;
  opts.level = optLevel;
  opts.verifyEach = !noVerifyEach;
  opts.pipelineSegments = segments;
  if (printAfterAll)
    opts.printAfterAll = &llvm::errs();
  if (!passes.empty()) {
    llvm::Expected<std::vector<std::string>> names = compiler::parsePassList(passes);
    if (!names)
      return names.takeError();
    opts.passes = std::move(*names);
  }
  if (segments > 64)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--pipeline-segments %u out of range (0..64)",
                                   unsigned(segments));
  if (llvm::Expected<std::vector<std::string>> names = compiler::pipelineFor(opts); !names)
    return names.takeError();
  return opts;
}

} // namespace collc::tool
