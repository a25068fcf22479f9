// tools/collc/CmdGen.cpp: `collc gen` — instantiate an algorithm, print the plan.
#include "tools/collc/AlgorithmFlags.h"
#include "tools/collc/Commands.h"

#include "ir/PlanIO.h"
#include "schedules/Generators.h"

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
cl::opt<std::string> collective("collective",
                                cl::desc("Collective of a library algorithm (default allreduce)"),
                                cl::value_desc("C"), cl::init("allreduce"),
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
  if (isAlgorithmFile(algorithm)) {
    llvm::Expected<ir::Plan> plan = loadPlan(algorithm, nullptr, nullptr, maxOps);
    if (!plan)
      return reportMisuse(plan.takeError());
    return writeOutput(output, ir::printPlan(*plan)) ? Success : Misuse;
  }
  std::optional<ir::Collective> c = ir::parseCollective(collective);
  if (!c)
    return reportMisuse(llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "unknown collective '%s' (expected allreduce, reduce, reduce_scatter_block, allgather, "
        "bcast, scan or exscan; collc list shows the algorithms of each)",
        collective.c_str()));
  llvm::Expected<std::pair<uint32_t, uint32_t>> ranks = ranksFromFlags(/*allowRange=*/false);
  if (!ranks)
    return reportMisuse(ranks.takeError());
  llvm::Expected<std::vector<std::pair<std::string, int64_t>>> params = paramsFromFlags();
  if (!params)
    return reportMisuse(params.takeError());
  sched::GenOptions opts;
  opts.ranks = ranks->first;
  opts.root = rootFromFlag();
  opts.params = std::move(*params);
  opts.maxOps = maxOps;
  llvm::Expected<ir::Plan> plan = sched::generate(*c, algorithm, opts);
  if (!plan)
    return reportMisuse(plan.takeError());
  return writeOutput(output, ir::printPlan(*plan)) ? Success : Misuse;
}

} // namespace collc::tool
