// tools/collc/PipelineFlags.cpp: -O, --passes and friends for opt, compile,
// simulate and draw.
#include "tools/collc/PipelineFlags.h"

#include "tools/collc/Commands.h"

#include "model/Simulator.h"
#include "runtime/bytecode/Bundle.h"

#include "llvm/Support/raw_ostream.h"

namespace collc::tool {

namespace {
namespace cl = llvm::cl;
cl::opt<unsigned> optLevel("O", cl::Prefix, cl::desc("Optimization level 0..2 (default 2)"),
                           cl::value_desc("N"), cl::init(2), cl::sub(OptCommand()),
                           cl::sub(CompileCommand()), cl::sub(SimulateCommand()), cl::sub(DrawCommand()),
    cl::cat(category()));
cl::opt<std::string> passes(
    "passes",
    cl::desc("Run these passes, in this order, instead of a level's (dce, copy-elim, "
             "coalesce, relax-deps, pipeline, compact-scratch)"),
    cl::value_desc("a,b,c"), cl::sub(OptCommand()), cl::sub(CompileCommand()),
    cl::sub(SimulateCommand()), cl::sub(DrawCommand()),
    cl::cat(category()));
cl::opt<unsigned> segments(
    "pipeline-segments",
    cl::desc("Split every message into K segments (-O2 or --passes=pipeline; default: off "
             "at -O2, 4 for --passes=pipeline)"),
    cl::value_desc("K"), cl::init(0), cl::sub(OptCommand()), cl::sub(CompileCommand()),
    cl::sub(SimulateCommand()), cl::sub(DrawCommand()),
    cl::cat(category()));
cl::opt<bool> printAfterAll("print-after-all",
                            cl::desc("Print the plan to stderr after each pass that changed it"),
                            cl::sub(OptCommand()), cl::sub(CompileCommand()),
                            cl::sub(SimulateCommand()), cl::sub(DrawCommand()),
    cl::cat(category()));
cl::opt<bool> noVerifyEach("no-verify-each",
                           cl::desc("Do not prove the input and the result of every pass"),
                           cl::sub(OptCommand()), cl::sub(CompileCommand()),
                           cl::sub(SimulateCommand()), cl::sub(DrawCommand()),
    cl::cat(category()));
cl::opt<std::string> costSizes(
    "cost-sizes",
    cl::desc("With --topology: the sizes at which a pass's result is simulated against its "
             "input; a pass predicted slower at any is undone (default 8,64K,1M,16M)"),
    cl::value_desc("a,b,c"), cl::init("8,64K,1M,16M"), cl::sub(OptCommand()),
    cl::sub(CompileCommand()), cl::sub(SimulateCommand()), cl::sub(DrawCommand()),
    cl::cat(category()));

/// "1 MiB", "64 KiB", "8 B".
std::string sizeText(uint64_t b) {
  if (b >= (1u << 20) && b % (1u << 20) == 0)
    return std::to_string(b >> 20) + " MiB";
  if (b >= 1024 && b % 1024 == 0)
    return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " B";
}
} // namespace

llvm::Error weighPassesOnMachine(compiler::PipelineOptions &opts,
                                 std::vector<std::string> &undone) {
  llvm::Expected<const model::Topology *> topo = topologyFromFlags();
  if (!topo)
    return topo.takeError();
  if (!*topo) {
    if (costSizes.getNumOccurrences())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--cost-sizes needs --topology");
    return llvm::Error::success();
  }
  std::vector<uint64_t> sizes;
  llvm::SmallVector<llvm::StringRef, 8> items;
  llvm::StringRef(costSizes).split(items, ',');
  for (llvm::StringRef item : items) {
    uint64_t b = 0;
    if (!rt::parseByteCount(item.trim(), b))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--cost-sizes: '" + item.str() + "' is not a size (such as 8, 64K, 1M)");
    sizes.push_back(b);
  }
  const model::Topology &t = **topo;
  const double gamma = t.gammaOf("double");
  opts.cost = [&t, sizes, gamma](const ir::Plan &plan) {
    return model::predictTimes(plan, t, sizes, 8, gamma);
  };
  opts.costPoint = [sizes](size_t i) { return "at " + sizeText(sizes[i]); };
  opts.undone = &undone;
  return llvm::Error::success();
}

void reportUndone(const compiler::PipelineOptions &opts, const std::vector<std::string> &undone,
                  bool stats, llvm::raw_ostream &os) {
  for (const std::string &u : undone)
    llvm::errs() << "collc: note: pass undone, predicted slower on the machine: " << u << '\n';
  if (!stats || !opts.cost)
    return;
  os << "passes-undone: " << undone.size() << '\n';
  for (const std::string &u : undone)
    os << "undone: " << u << '\n';
}

int pipelineFromFlags(FlagPipeline &p) {
  llvm::Expected<compiler::PipelineOptions> opts = pipelineOptionsFromFlags();
  if (!opts)
    return reportMisuse(opts.takeError());
  p.opts = std::move(*opts);
  if (llvm::Error e = weighPassesOnMachine(p.opts, p.undone))
    return reportMisuse(std::move(e));
  return Success;
}

int loadShownPlan(llvm::StringRef input, ShownPlan &out) {
  FlagPipeline pipe;
  if (int rc = pipelineFromFlags(pipe); rc != Success)
    return rc;
  compiler::PipelineOptions *opts = &pipe.opts;
  InputForm form = InputForm::Text;
  llvm::Expected<ir::Plan> plan = loadPlan(input, nullptr, nullptr, uint64_t(1) << 24, &form);
  if (!plan)
    return reportReadError(plan.takeError());
  out.input = describe(form, plan->shape.ranks);
  if (form == InputForm::Compiled) {
    out.optimized = "as compiled";
    out.plan = std::move(*plan);
    return Success;
  }
  out.optimized = opts->passes.empty() ? "-O" + std::to_string(opts->level) : "--passes";
  if (opts->passes.empty() && opts->level == 0) {
    out.plan = std::move(*plan); // as written: also a plan that does not verify
    return Success;
  }
  llvm::Expected<ir::Plan> result = compiler::optimize(std::move(*plan), *opts);
  if (!result) {
    llvm::errs() << "collc: " << llvm::toString(result.takeError())
                 << " (-O0 takes the plan as written)\n";
    return Refused;
  }
  reportUndone(*opts, pipe.undone, /*stats=*/false, llvm::errs());
  out.plan = std::move(*result);
  return Success;
}

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
