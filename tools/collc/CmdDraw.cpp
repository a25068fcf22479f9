// tools/collc/CmdDraw.cpp: `collc draw` — a space-time diagram of a plan (docs/draw.md).
#include "tools/collc/AlgorithmFlags.h"
#include "tools/collc/Commands.h"
#include "tools/collc/DrawVerdict.h"

#include "compiler/Disasm.h"
#include "ir/PlanIO.h"
#include "schedules/Generators.h"
#include "tools/draw/PlanDiagram.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
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
cl::opt<std::string> collective("collective",
                                cl::desc("Collective of a library algorithm (default allreduce)"),
                                cl::value_desc("C"), cl::init("allreduce"), cl::sub(DrawCommand()),
                                cl::cat(category()));
cl::opt<std::string> title("title", cl::desc("Title of the picture (default: the plan's shape)"),
                           cl::value_desc("TEXT"), cl::sub(DrawCommand()), cl::cat(category()));

llvm::Error misuse(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

/// The plan `input` names: a plan file (YAML or .cplan), an algorithm file, or
/// a library algorithm.
llvm::Expected<ir::Plan> planFromInput() {
  if (isAlgorithmFile(input))
    return loadPlan(input, nullptr, nullptr);
  // A bare name that is no file: an algorithm of the library.
  if (input != "-" && !llvm::sys::fs::exists(input) && !llvm::StringRef(input).contains('/') &&
      !llvm::StringRef(input).contains('.')) {
    std::optional<ir::Collective> c = ir::parseCollective(collective);
    if (!c)
      return misuse("unknown collective '" + collective + "'");
    bool known = false;
    for (const sched::Algorithm &a : sched::algorithms())
      known = known || (a.name == input && a.collective == *c);
    if (!known)
      return misuse("'" + input + "' is neither a file nor an algorithm of " + collective +
                    " (collc list shows them)");
    llvm::Expected<std::pair<uint32_t, uint32_t>> ranks = ranksFromFlags(false);
    if (!ranks)
      return ranks.takeError();
    llvm::Expected<std::vector<std::pair<std::string, int64_t>>> params = paramsFromFlags();
    if (!params)
      return params.takeError();
    sched::GenOptions opts;
    opts.ranks = ranks->first;
    opts.root = rootFromFlag();
    opts.params = std::move(*params);
    return sched::generate(*c, input, opts);
  }
  if (llvm::Error e = refuseAlgorithmFlags(input))
    return e;
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(input, /*IsText=*/false);
  if (!buf)
    return misuse("cannot read '" + input + "': " + buf.getError().message());
  const llvm::StringRef data = (*buf)->getBuffer();
  if (data.startswith("\x7f"
                      "CPL"))
    return compiler::disassemble(
        llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(data.data()), data.size()));
  return ir::parsePlan(data, input == "-" ? llvm::StringRef("<stdin>") : llvm::StringRef(input));
}
} // namespace

int runDraw() {
  llvm::Expected<draw::PictureKind> kind = draw::pictureKindFor(output, format);
  if (!kind)
    return reportMisuse(kind.takeError());
  llvm::Expected<ir::Plan> plan = planFromInput();
  if (!plan)
    return reportReadError(plan.takeError());
  draw::DrawOptions opts;
  opts.title = title;
  return writeOutput(output, draw::drawPlan(*plan, opts, *kind)) ? Success : Misuse;
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
