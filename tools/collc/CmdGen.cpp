// tools/collc/CmdGen.cpp: `collc gen` — instantiate an algorithm, print the plan.
#include "tools/collc/AlgorithmFlags.h"
#include "tools/collc/Commands.h"

#include "ir/PlanIO.h"
#include "schedules/Generators.h"

#include "llvm/Support/Error.h"

namespace collc::tool {

llvm::cl::SubCommand &GenCommand() {
  static llvm::cl::SubCommand sub(
      "gen", "Generate a plan with an algorithm of 'collc list' or an algorithm file (.calgo)");
  return sub;
}

namespace {
namespace cl = llvm::cl;
cl::opt<std::string> algorithm(cl::Positional, cl::Required, cl::desc("ALGORITHM|FILE.calgo"),
                               cl::sub(GenCommand()), cl::cat(category()));
cl::opt<uint64_t> maxOps("max-ops",
                        cl::desc("Refuse a plan of more ops than this, over all ranks "
                                 "(default 16777216)"),
                        cl::value_desc("N"), cl::init(sched::defaultMaxOps),
                        cl::sub(GenCommand()), cl::cat(category()));
cl::opt<std::string> output("o", cl::desc("Output file (default: standard output)"),
                            cl::value_desc("FILE"), cl::init("-"), cl::sub(GenCommand()),
                            cl::cat(category()));
} // namespace

int runGen() {
  if (!isAlgorithm(algorithm))
    return reportMisuse(llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "'%s' is neither an algorithm file (.calgo) nor a name of collc list",
        algorithm.c_str()));
  llvm::Expected<ir::Plan> plan = loadPlan(algorithm, nullptr, nullptr, maxOps);
  if (!plan)
    return reportMisuse(plan.takeError());
  return writeOutput(output, ir::printPlan(*plan)) ? Success : Misuse;
}

} // namespace collc::tool
