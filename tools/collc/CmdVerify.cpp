// tools/collc/CmdVerify.cpp: `collc verify` — prove a plan or say why not.
#include "tools/collc/Commands.h"

#include "compiler/Verifier.h"
#include "ir/PlanIO.h"

#include "llvm/Support/raw_ostream.h"

namespace collc::tool {

llvm::cl::SubCommand &VerifyCommand() {
  static llvm::cl::SubCommand sub(
      "verify", "Prove that a plan computes its collective (exit 0 proven, 1 disproved "
                "or invalid, 2 unreadable input, not a plan (syntax) or misuse)");
  return sub;
}

namespace {
namespace cl = llvm::cl;
cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("FILE|-"),
                           cl::sub(VerifyCommand()), cl::cat(category()));
cl::opt<bool> noncommutative(
    "noncommutative",
    cl::desc("Prove the plan for operations that are only associative (keeps rank order)"),
    cl::sub(VerifyCommand()), cl::cat(category()));
cl::opt<bool> requireIdentical(
    "require-identical",
    cl::desc("Refuse plans whose ranks compute different reduction trees"),
    cl::sub(VerifyCommand()), cl::cat(category()));
cl::opt<unsigned> maxErrors("max-errors",
                            cl::desc("Report at most N diagnostics (0 = all; default 20)"),
                            cl::value_desc("N"), cl::init(20), cl::sub(VerifyCommand()),
                            cl::cat(category()));
cl::opt<bool> stats("stats", cl::desc("Print key: value statistics of the plan"),
                    cl::sub(VerifyCommand()), cl::cat(category()));
} // namespace

int runVerify() {
  llvm::Expected<ir::Plan> plan = ir::readPlanFile(input);
  if (!plan) {
    // An `invalid` plan is disproved like any other wrong plan: its
    // diagnostic on standard output, exit 1. Unreadable input is exit 2.
    int code = Misuse;
    llvm::handleAllErrors(
        plan.takeError(),
        [&](const ir::PlanReadError &e) {
          if (e.kind() != ir::ReadErrorKind::Invalid) {
            llvm::errs() << "collc: " << e.message() << '\n';
            return;
          }
          code = Refused;
          llvm::outs() << e.message() << "\ndisproved: 1 error\n";
        },
        [&](const llvm::ErrorInfoBase &e) { llvm::errs() << "collc: " << e.message() << '\n'; });
    return code;
  }
  compiler::VerifyOptions opts;
  opts.noncommutative = noncommutative;
  opts.requireIdentical = requireIdentical;
  opts.maxErrors = maxErrors;
  compiler::VerifyResult result = compiler::verify(*plan, opts);
  llvm::raw_ostream &os = llvm::outs();
  for (const compiler::Diagnostic &d : result.diagnostics) {
    compiler::print(d, os);
    os << '\n';
  }
  const ir::Shape &s = plan->shape;
  if (result.proven()) {
    os << "proven: " << ir::name(s.collective) << " '" << plan->algorithm << "', " << s.ranks
       << (s.ranks == 1 ? " rank" : " ranks") << ", "
       << (s.commutative && !noncommutative ? "commutative operations"
                                            : "any associative operation")
       << (s.inPlace ? ", also in place" : "")
       << (result.stats.identical ? ", identical results on all ranks"
                                  : ", results may differ between ranks")
       << '\n';
  } else {
    size_t n = result.diagnostics.size() + result.dropped;
    os << "disproved: " << n << (n == 1 ? " error" : " errors");
    if (result.dropped)
      os << " (" << result.dropped << " not shown; see --max-errors)";
    os << '\n';
  }
  if (stats)
    compiler::printStats(result.stats, os);
  return result.proven() ? Success : Refused;
}

} // namespace collc::tool
