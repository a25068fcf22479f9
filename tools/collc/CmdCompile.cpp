// tools/collc/CmdCompile.cpp: `collc compile` — verify a plan and lower it to .cplan.
#include "tools/collc/Commands.h"

#include "compiler/Lower.h"
#include "compiler/Verifier.h"
#include "ir/PlanIO.h"
#include "runtime/bytecode/Loader.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace collc::tool {

llvm::cl::SubCommand &CompileCommand() {
  static llvm::cl::SubCommand sub(
      "compile", "Verify a plan and compile it to .cplan bytecode (exit 0 compiled, 1 "
                 "refused, 2 unreadable input)");
  return sub;
}

namespace {
namespace cl = llvm::cl;
cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("FILE.yaml|-"),
                           cl::sub(CompileCommand()), cl::cat(category()));
cl::opt<std::string> output("o", cl::Required, cl::desc("Output file (.cplan; - = stdout)"),
                            cl::value_desc("FILE"), cl::sub(CompileCommand()),
                            cl::cat(category()));
cl::opt<unsigned> optLevel("O", cl::Prefix, cl::desc("Optimization level 0..2 (default 2)"),
                           cl::value_desc("N"), cl::init(2), cl::sub(CompileCommand()),
                           cl::cat(category()));
cl::opt<bool> stats("stats",
                    cl::desc("Print key: value statistics of the plan and its bytecode"),
                    cl::sub(CompileCommand()), cl::cat(category()));
cl::opt<bool> noVerify("no-verify", cl::desc("Compile even a plan that does not verify"),
                       cl::sub(CompileCommand()), cl::cat(category()));

/// The pass pipeline. No passes exist yet, so every level leaves the plan as
/// it is; when passes arrive they run here, between the two verifications.
void optimize(ir::Plan &plan, unsigned level) { (void)plan, (void)level; }
} // namespace

int runCompile() {
  if (optLevel > 2)
    return reportMisuse(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                                "-O%u: optimization level must be 0, 1 or 2",
                                                unsigned(optLevel)));
  llvm::Expected<ir::Plan> plan = ir::readPlanFile(input);
  if (!plan)
    return reportMisuse(plan.takeError());
  const llvm::StringRef inName = input == "-" ? llvm::StringRef("<stdin>") : input;

  compiler::PlanStats planStats;
  planStats.ops = plan->numOps();
  if (!noVerify) {
    compiler::VerifyResult result = compiler::verify(*plan);
    if (!result.proven()) {
      for (const compiler::Diagnostic &d : result.diagnostics) {
        compiler::print(d, llvm::errs());
        llvm::errs() << '\n';
      }
      const size_t n = result.diagnostics.size() + result.dropped;
      llvm::errs() << "collc: refusing to compile '" << inName << "': it does not verify ("
                   << n << (n == 1 ? " error" : " errors")
                   << "; --no-verify compiles it anyway)\n";
      return Refused;
    }
    planStats = result.stats;
  }

  optimize(*plan, optLevel);
  // After the pipeline: verify again here once passes can change the plan.

  std::vector<uint8_t> bytes = compiler::lower(*plan);
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
  if (stats) {
    llvm::raw_ostream &os = llvm::outs();
    if (noVerify)
      os << "ops: " << planStats.ops << '\n';
    else
      compiler::printStats(planStats, os);
    os << "bytes: " << bytes.size() << '\n';
    os << llvm::formatv("bytes-per-op: {0:F2}\n",
                        planStats.ops ? double(bytes.size()) / double(planStats.ops) : 0.0);
  }
  return Success;
}

} // namespace collc::tool
