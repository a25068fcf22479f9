// tools/collc/CmdGen.cpp: `collc gen` — run a generator, print the plan.
#include "tools/collc/Commands.h"

#include "ir/PlanIO.h"
#include "schedules/Generators.h"

namespace collc::tool {

llvm::cl::SubCommand &GenCommand() {
  static llvm::cl::SubCommand sub("gen", "Generate a plan with one of the algorithms of 'collc list'");
  return sub;
}

namespace {
namespace cl = llvm::cl;
cl::opt<std::string> algorithm(cl::Positional, cl::Required, cl::desc("ALGORITHM"),
                               cl::sub(GenCommand()), cl::cat(category()));
cl::opt<std::string> collective("collective", cl::desc("Collective (default allreduce)"),
                                cl::value_desc("C"), cl::init("allreduce"),
                                cl::sub(GenCommand()), cl::cat(category()));
cl::opt<unsigned> ranks("ranks", cl::Required, cl::desc("Number of ranks"),
                        cl::value_desc("P"), cl::sub(GenCommand()), cl::cat(category()));
cl::opt<unsigned> root("root", cl::desc("Root rank (reduce; default 0)"), cl::value_desc("R"),
                       cl::init(0), cl::sub(GenCommand()), cl::cat(category()));
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
  std::optional<ir::Collective> c = ir::parseCollective(collective);
  if (!c)
    return reportMisuse(llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "unknown collective '%s' (expected allreduce, reduce, reduce_scatter_block, allgather, "
        "bcast, scan or exscan; collc list shows the algorithms of each)",
        collective.c_str()));
  sched::GenOptions opts;
  opts.ranks = ranks;
  opts.root = root;
  opts.maxOps = maxOps;
  llvm::Expected<ir::Plan> plan = sched::generate(*c, algorithm, opts);
  if (!plan)
    return reportMisuse(plan.takeError());
  return writeOutput(output, ir::printPlan(*plan)) ? Success : Misuse;
}

} // namespace collc::tool
