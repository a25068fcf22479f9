// tools/collc/CmdCompile.cpp: `collc compile` — verify a plan and lower it to .cplan.
#include "tools/collc/AlgorithmFlags.h"
#include "tools/collc/Commands.h"
#include "tools/collc/PipelineFlags.h"

#include "compiler/Lower.h"
#include "compiler/Prove.h"
#include "compiler/Verifier.h"
#include "compiler/passes/Pipeline.h"
#include "ir/PlanIO.h"
#include "runtime/bytecode/Loader.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace collc::tool {

llvm::cl::SubCommand &CompileCommand() {
  static llvm::cl::SubCommand sub(
      "compile", "Verify a plan and compile it to .cplan bytecode (exit 0 compiled, 1 "
                 "refused: disproved or invalid, 2 unreadable input, not a plan or misuse)");
  return sub;
}

namespace {
namespace cl = llvm::cl;
cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("FILE.yaml|FILE.calgo|ALG|-"),
                           cl::sub(CompileCommand()), cl::cat(category()));
cl::opt<std::string> output("o", cl::Required, cl::desc("Output file (.cplan; - = stdout)"),
                            cl::value_desc("FILE"), cl::sub(CompileCommand()),
                            cl::cat(category()));
cl::opt<bool> stats("stats",
                    cl::desc("Print key: value statistics of the plan and its bytecode"),
                    cl::sub(CompileCommand()), cl::cat(category()));
cl::opt<bool> noVerify("no-verify", cl::desc("Compile even a plan that does not verify"),
                       cl::sub(CompileCommand()), cl::cat(category()));

} // namespace

int runCompile() {
  FlagPipeline pipe;
  if (int rc = pipelineFromFlags(pipe); rc != Success)
    return rc;
  compiler::PipelineOptions *opts = &pipe.opts;
  const std::vector<std::string> &undone = pipe.undone;
  const lang::Module *module = nullptr;
  lang::InstantiateOptions used;
  InputForm form = InputForm::Text;
  llvm::Expected<ir::Plan> plan = loadPlan(input, &module, &used, uint64_t(1) << 24, &form);
  if (!plan)
    return reportReadError(plan.takeError());
  const uint32_t ranks = plan->shape.ranks;
  const llvm::StringRef inName = input == "-" ? llvm::StringRef("<stdin>") : input;

  compiler::VerifyResult result;
  if (!noVerify) {
    result = compiler::verify(*plan);
    if (!result.proven()) {
      printDiagnostics(result.diagnostics, module, used, llvm::errs());
      const size_t n = result.diagnostics.size() + result.dropped;
      llvm::errs() << "collc: refusing to compile '" << inName << "': it does not verify ("
                   << n << (n == 1 ? " error" : " errors")
                   << "; --no-verify compiles it anyway)\n";
      return Refused;
    }
  }

  // The pass pipeline proves its input and every pass's result again
  // (--no-verify-each skips that; --no-verify runs the passes unchecked).
  if (noVerify)
    opts->verifyEach = false;
  // The input is proven above, and the pipeline's last proof is the first
  // of proveStrongest's: neither is repeated.
  std::optional<compiler::VerifyResult> lastProof;
  if (!noVerify) {
    opts->inputProof = &result;
    opts->resultProof = &lastProof;
  }
  llvm::Expected<ir::Plan> optimized = compiler::optimize(std::move(*plan), *opts);
  if (!optimized) {
    llvm::errs() << "collc: " << llvm::toString(optimized.takeError()) << '\n';
    return Refused;
  }
  plan = std::move(*optimized);

  // What is written is proven again, with its claims raised to the strongest
  // the verifier proves (docs/bytecode.md, "Proof status").
  rt::Proof proof;
  compiler::PlanStats planStats;
  if (!noVerify) {
    compiler::Proven proven =
        compiler::proveStrongest(*plan, {}, lastProof ? &*lastProof : nullptr);
    if (!proven.result.proven()) { // the pass manager proved it: cannot happen
      llvm::errs() << "collc: internal error: the optimized plan does not verify\n";
      return Refused;
    }
    proof = proven.proof;
    planStats = proven.result.stats;
  }
  std::vector<uint8_t> bytes = compiler::lower(*plan, proof);
  // The loader is the last word on what may run: never write a file it refuses
  // (possible only with --no-verify, e.g. a peer out of range).
  rt::LoadedPlan check;
  if (rt::Status s = rt::load(bytes, check); !s.ok()) {
    llvm::errs() << "collc: cannot compile '" << inName << "': " << s.message() << '\n';
    return Refused;
  }
  if (!writeOutput(output, llvm::StringRef(reinterpret_cast<const char *>(bytes.data()),
                                           bytes.size())))
    return Misuse;
  if (noVerify)
    llvm::errs() << "collc: warning: '" << (output == "-" ? llvm::StringRef("<stdout>") : output)
                 << "' is unproven: compiled with --no-verify, nothing about it was checked "
                    "but what the loader checks (prove it with 'collc disasm FILE | collc "
                    "verify -')\n";
  if (stats) {
    // Statistics of the plan written (the verifier computes them).
    llvm::raw_ostream &os = llvm::outs();
    if (noVerify)
      planStats = compiler::verify(*plan).stats;
    compiler::printStats(planStats, os);
    os << "bytes: " << bytes.size() << '\n';
    os << llvm::formatv("bytes-per-op: {0:F2}\n",
                        planStats.ops ? double(bytes.size()) / double(planStats.ops) : 0.0);
    os << "input: " << describe(form, ranks) << '\n';
  }
  reportUndone(*opts, undone, stats, llvm::outs());
  return Success;
}

} // namespace collc::tool
