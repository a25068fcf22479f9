// tools/collc/CmdDraw.cpp: `collc draw` — a space-time diagram of a plan (docs/draw.md).
#include "tools/collc/AlgorithmFlags.h"
#include "tools/collc/Commands.h"
#include "tools/collc/DrawVerdict.h"
#include "tools/collc/PipelineFlags.h"

#include "model/Simulator.h"
#include "ir/PlanIO.h"
#include "runtime/bytecode/Bundle.h"
#include "runtime/kernels/Kernels.h"
#include "schedules/Generators.h"
#include "tools/draw/PlanDiagram.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace collc::tool {

llvm::cl::SubCommand &DrawCommand() {
  static llvm::cl::SubCommand sub(
      "draw", "Draw a plan as a space-time diagram: SVG, or a self-contained HTML page with "
              "hover text (exit 0 drawn, 1 invalid plan, 2 unreadable input or misuse)");
  return sub;
}

namespace {
namespace cl = llvm::cl;
cl::opt<std::string> input(cl::Positional, cl::Required,
                           cl::desc("PLAN|FILE.calgo|ALGORITHM|- (a plan: YAML or .cplan; an "
                                    "algorithm file; or a name of 'collc list')"),
                           cl::sub(DrawCommand()), cl::cat(category()));
cl::opt<std::string> output("o", cl::Required,
                            cl::desc("Output file: .svg or .html (- = stdout, SVG)"),
                            cl::value_desc("FILE"), cl::sub(DrawCommand()), cl::cat(category()));
cl::opt<std::string> format("format",
                            cl::desc("svg or html (default: from the output file's name)"),
                            cl::value_desc("svg|html"), cl::sub(DrawCommand()),
                            cl::cat(category()));
cl::opt<std::string> title("title", cl::desc("Title of the picture (default: the plan's shape)"),
                           cl::value_desc("TEXT"), cl::sub(DrawCommand()), cl::cat(category()));
cl::opt<std::string> bytesFlag("bytes",
                               cl::desc("Simulate on --topology for a vector of N bytes (K, M, G: "
                                        "powers of 1024) and draw the ops at their simulated "
                                        "times"),
                               cl::value_desc("N"), cl::sub(DrawCommand()), cl::cat(category()));
cl::opt<std::string> dtype("dtype",
                           cl::desc("With --bytes: the element type, its size and the "
                                    "topology's reduce cost (default double)"),
                           cl::value_desc("T"), cl::init("double"), cl::sub(DrawCommand()),
                           cl::cat(category()));

llvm::Error misuse(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

/// The plan `input` names: a plan file (YAML or .cplan), an algorithm file, or
/// a library algorithm.
/// What draw refuses of a plan file before reading it (an algorithm takes
/// every flag).
llvm::Error checkPlanFlags() {
  if (isAlgorithm(input))
    return llvm::Error::success();
  if (bytesFlag.empty()) {
    llvm::Expected<const model::Topology *> topo = topologyFromFlags();
    if (!topo)
      return topo.takeError();
    if (*topo)
      return misuse("--topology without --bytes: the plan '" + input +
                    "' is drawn as it is; add --bytes N to draw it at its simulated times");
  }
  return refuseAlgorithmFlags(input, /*allowTopology=*/true);
}

/// What --bytes asks for: the machine, the size and the element type.
struct SimRequest {
  const model::Topology *topo = nullptr;
  uint64_t bytes = 0;
  rt::ElemType type{};
};

/// --bytes, --dtype and --topology, checked before the plan is read; none
/// without --bytes.
llvm::Expected<std::optional<SimRequest>> simRequestFromFlags() {
  if (bytesFlag.empty()) {
    if (bytesFlag.getNumOccurrences())
      return misuse("--bytes '' is not a size (bytes, optional K, M or G suffix)");
    if (dtype.getNumOccurrences())
      return misuse("--dtype applies to a simulated drawing: give --topology and --bytes");
    return std::nullopt;
  }
  SimRequest q;
  if (!rt::parseByteCount(bytesFlag.getValue(), q.bytes))
    return misuse(llvm::formatv("--bytes '{0}' is not a size (bytes, optional K, M or G suffix)",
                                bytesFlag.getValue()));
  std::optional<rt::ElemType> et = rt::parseElemType(dtype.getValue());
  if (!et)
    return misuse(llvm::formatv("--dtype: unknown element type '{0}'", dtype.getValue()));
  q.type = *et;
  llvm::Expected<const model::Topology *> topo = topologyFromFlags();
  if (!topo)
    return topo.takeError();
  if (!*topo)
    return misuse("--bytes needs --topology FILE: the machine to simulate the plan on");
  q.topo = *topo;
  return q;
}

} // namespace

int runDraw() {
  llvm::Expected<draw::PictureKind> kind = draw::pictureKindFor(output, format);
  if (!kind)
    return reportMisuse(kind.takeError());
  llvm::Expected<std::optional<SimRequest>> sim = simRequestFromFlags();
  if (!sim)
    return reportMisuse(sim.takeError());
  if (llvm::Error e = checkPlanFlags())
    return reportReadError(std::move(e));
  // As tune and the drop-in run it (-O2), unless -O0 or compiled already.
  ShownPlan shown;
  if (int rc = loadShownPlan(input, shown); rc != Success)
    return rc;
  const ir::Plan *plan = &shown.plan;
  draw::DrawOptions opts;
  opts.title = title.empty() ? draw::defaultTitle(*plan) + " (" + shown.input + ", " +
                                   shown.optimized + ")"
                             : title.getValue();
  if (!*sim)
    return writeOutput(output, draw::drawPlan(*plan, opts, *kind)) ? Success : Misuse;

  // At the simulated times (docs/topology.md, "The cost model").
  const SimRequest &q = **sim;
  llvm::Expected<model::Placement> pl = model::place(*q.topo, plan->shape.ranks);
  if (!pl)
    return reportMisuse(pl.takeError());
  model::SimOptions so;
  so.elemBytes = static_cast<uint32_t>(rt::elemSize(q.type));
  so.bytes = q.bytes / so.elemBytes * so.elemBytes;
  so.gamma = q.topo->gammaOf(std::string(rt::elemTypeName(q.type)));
  so.opTimes = true;
  llvm::Expected<model::SimResult> r = model::simulate(*plan, *q.topo, *pl, so);
  if (!r) {
    llvm::errs() << "collc: cannot simulate the plan: " << llvm::toString(r.takeError())
                 << " (collc draw without --bytes draws it in dependency order)\n";
    return Refused;
  }
  const compiler::Messages messages(*plan);
  draw::Timeline t = draw::simulatedTimeline(*plan, messages, *q.topo, *r, "");
  t.description = llvm::formatv("simulated on {0}, {1} of {2}: {3:f3} {4}", q.topo->name,
                                draw::bytesText(so.bytes), std::string(rt::elemTypeName(q.type)),
                                t.span, draw::unitLabel(t.unit))
                      .str();
  return writeOutput(output, draw::drawPlan(*plan, opts, *kind, &t)) ? Success : Misuse;
}

} // namespace collc::tool

// --- collc verify --draw ----------------------------------------------------------

namespace collc::tool {

llvm::Error checkDrawPath(llvm::StringRef path) {
  return draw::pictureKindFor(path, "").takeError();
}

bool drawVerdict(const ir::Plan &plan, const compiler::VerifyResult &result, llvm::StringRef path) {
  llvm::Expected<draw::PictureKind> kind = draw::pictureKindFor(path, "");
  if (!kind) { // checkDrawPath refused it before
    reportMisuse(kind.takeError());
    return false;
  }
  draw::DrawOptions opts;
  if (!result.diagnostics.empty()) {
    const compiler::Diagnostic &d = result.diagnostics.front();
    opts.marks =
        draw::marksFor(plan, d.rank, d.op, d.message, compiler::name(d.cls), compiler::toString(d));
    opts.title = draw::defaultTitle(plan) + ": " + compiler::name(d.cls).str();
  } else {
    opts.title = draw::defaultTitle(plan) + ": proven";
  }
  return writeOutput(path, draw::drawPlan(plan, opts, *kind));
}

} // namespace collc::tool
