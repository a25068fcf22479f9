// tools/collc/CmdOpt.cpp: `collc opt` — run the pass pipeline, write the optimized plan.
#include "tools/collc/AlgorithmFlags.h"
#include "tools/collc/Commands.h"
#include "tools/collc/PipelineFlags.h"

#include "compiler/Verifier.h"
#include "compiler/passes/Pipeline.h"
#include "ir/PlanIO.h"

#include "llvm/Support/raw_ostream.h"

namespace collc::tool {

llvm::cl::SubCommand &OptCommand() {
  static llvm::cl::SubCommand sub(
      "opt", "Optimize a plan, proving it after every pass, and write it as YAML (exit 0 "
             "optimized, 1 refused, 2 unreadable input or misuse)");
  return sub;
}

namespace {
namespace cl = llvm::cl;
cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("FILE|FILE.calgo|ALG|-"),
                           cl::sub(OptCommand()), cl::cat(category()));
cl::opt<std::string> output("o", cl::desc("Output file (default: standard output)"),
                            cl::value_desc("FILE"), cl::init("-"), cl::sub(OptCommand()),
                            cl::cat(category()));
cl::opt<bool> stats("stats", cl::desc("Print key: value statistics of the optimized plan"),
                    cl::sub(OptCommand()), cl::cat(category()));
} // namespace

int runOpt() {
  // Misuse (an unknown pass, a bad level) is exit 2, before reading anything.
  FlagPipeline pipe;
  if (int rc = pipelineFromFlags(pipe); rc != Success)
    return rc;
  compiler::PipelineOptions *opts = &pipe.opts;
  const std::vector<std::string> &undone = pipe.undone;
  InputForm form = InputForm::Text;
  llvm::Expected<ir::Plan> plan = loadPlan(input, nullptr, nullptr, uint64_t(1) << 24, &form);
  if (!plan)
    return reportReadError(plan.takeError());
  const uint32_t ranks = plan->shape.ranks;
  llvm::Expected<ir::Plan> result = compiler::optimize(std::move(*plan), *opts);
  if (!result) {
    llvm::errs() << "collc: " << llvm::toString(result.takeError()) << '\n';
    return Refused;
  }
  if (!writeOutput(output, ir::printPlan(*result)))
    return Misuse;
  if (stats) {
    compiler::printStats(compiler::verify(*result).stats, llvm::outs());
    llvm::outs() << "input: " << describe(form, ranks) << '\n';
  }
  reportUndone(*opts, undone, stats, llvm::outs());
  return Success;
}

} // namespace collc::tool
