// tools/collc/Main.cpp: `collc`, the command line of the collective compiler.
#include "tools/collc/Commands.h"

#include "compiler/HeapSetup.h"
#include "ir/PlanIO.h"
#include "runtime/bytecode/Format.h"
#include "schedules/Generators.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace collc::tool;

namespace collc::tool {

llvm::cl::OptionCategory &category() {
  static llvm::cl::OptionCategory cat("collc options");
  return cat;
}

int reportMisuse(llvm::Error err) {
  llvm::errs() << "collc: " << llvm::toString(std::move(err)) << '\n';
  return Misuse;
}

int reportReadError(llvm::Error err) {
  int code = Misuse;
  llvm::handleAllErrors(
      std::move(err),
      [&](const ir::PlanReadError &e) {
        code = e.kind() == ir::ReadErrorKind::Invalid ? Refused : Misuse;
        llvm::errs() << "collc: " << e.message() << '\n';
      },
      [&](const llvm::ErrorInfoBase &e) { llvm::errs() << "collc: " << e.message() << '\n'; });
  return code;
}

bool writeOutput(llvm::StringRef path, llvm::StringRef text) {
  if (path == "-" || path.empty()) {
    llvm::outs() << text;
    llvm::outs().flush();
    return true;
  }
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    llvm::errs() << "collc: cannot write '" << path << "': " << ec.message() << '\n';
    return false;
  }
  out.os() << text;
  out.os().close();
  if (out.os().has_error()) {
    llvm::errs() << "collc: cannot write '" << path << "': " << out.os().error().message()
                 << '\n';
    out.os().clear_error();
    return false;
  }
  out.keep();
  return true;
}

} // namespace collc::tool

namespace {
using namespace collc;

/// One line of usage per command, the order of `collc --help`.
struct Usage {
  llvm::StringRef command, line;
};
const Usage usages[] = {
    {"list", "collc list [--library DIR]         algorithms and their properties"},
    {"gen", "collc gen ALG|FILE.calgo [--collective C] --ranks P [--root R] [--set K=V] "
            "[--topology T [--mapping M]] [--max-ops N] [-o FILE]"},
    {"verify", "collc verify FILE|FILE.cplan|FILE.cbundle|FILE.calgo|ALG|- [--ranks A..B [--root R|--roots all] "
               "[--set K=V] [--topology T [--mapping M]] [--collective C] [--cache DIR]] [--noncommutative] "
               "[--require-identical] [--max-errors N] [--stats]"},
    {"opt", "collc opt FILE|FILE.cplan|FILE.calgo|- [--ranks P ...] [-O0|-O1|-O2] [--passes=a,b] "
            "[--topology T [--cost-sizes a,b]] [-o FILE] [--print-after-all] [--stats]"},
    {"compile", "collc compile FILE|FILE.cplan|FILE.calgo|- [--ranks P ...] -o FILE.cplan [-O0|-O1|-O2] "
                "[--topology T [--cost-sizes a,b]] [--stats] [--no-verify]"},
    {"disasm", "collc disasm FILE.cplan [-o FILE.yaml]"},
    {"simulate", "collc simulate FILE|FILE.cplan|FILE.calgo|ALG --topology T [--ranks P ...] "
                 "--bytes N [-O0|-O1|-O2] [--dtype D] [--json] [--max-path N]"},
    {"tune", "collc tune --topology T --ranks P [--collective C] [--sizes MIN..MAX] "
             "[--noncommutative] -o FILE.cbundle [--rules FILE] [--report FILE.md] [--json FILE] "
             "[--budget 60s]"},
    {"calibrate", "mpirun -np P collc calibrate [-o FILE.yaml] [--transport collc|mpi] "
                  "[--max-bytes N] [--name NAME]"},
    {"bundle", "collc bundle FILE.cplan[@MIN-MAX]... -o FILE.cbundle | --list FILE.cbundle | "
               "--extract FILE.cbundle [--entry N] -o DIR|FILE"},
    {"draw", "collc draw PLAN|FILE.cplan|FILE.calgo|ALG [--ranks P ...] [--topology T --bytes N] "
             "[-O0|-O1|-O2] -o FILE.svg|FILE.html"},
    {"explain", "collc explain [--collective C] [--ranks A..B] [--sizes MIN..MAX] "
                "[--topology T [--by model]] [--tuned FILE.json] -o FILE.svg|FILE.html"},
};

/// The overview `--help` prints: every command for `collc --help`, the
/// command's own usage (and for gen, what it can generate) for
/// `collc COMMAND --help`.
std::string overview(llvm::StringRef command) {
  for (const Usage &u : usages) {
    if (u.command != command)
      continue;
    std::string text = u.line.str() + "\n";
    if (command == "gen") {
      text += "\nCollectives and their algorithms (collc list describes them):\n";
      std::vector<ir::Collective> order; // the registry's
      for (const sched::Algorithm &a : sched::algorithms())
        if (llvm::find(order, a.collective) == order.end())
          order.push_back(a.collective);
      for (ir::Collective c : order) {
        text += "  " + ir::name(c).str() + ":";
        for (const sched::Algorithm &a : sched::algorithms())
          if (a.collective == c)
            text += " " + a.name.str();
        text += '\n';
      }
    }
    return text;
  }
  std::string text = "collc: compile, verify and inspect MPI collective-communication plans\n\n";
  for (const Usage &u : usages)
    text += "  " + u.line.str() + "\n";
  return text + "\nRun 'collc COMMAND --help' for a command's options.\n"
                "COLLC_HEAP=default leaves malloc as it is (collc reserves heap ahead for large plans).\n";
}

} // namespace

int main(int argc, char **argv) {
  // Before anything large is allocated (compiler/HeapSetup.h).
  (void)collc::compiler::prepareHeapForLargePlans();
  llvm::InitLLVM init(argc, argv);
  const Command commands[] = {
      {&ListCommand(), runList},
      {&GenCommand(), runGen},
      {&VerifyCommand(), runVerify},
      {&CompileCommand(), runCompile},
      {&DisasmCommand(), runDisasm},
      {&BundleCommand(), runBundle},
      {&OptCommand(), runOpt},
      {&SimulateCommand(), runSimulate},
      {&TuneCommand(), runTune},
      {&CalibrateCommand(), runCalibrate},
      {&DrawCommand(), runDraw},
      {&ExplainCommand(), runExplain},
  };
  llvm::cl::SetVersionPrinter(
      [](llvm::raw_ostream &os) {
        os << "collc " COLLC_VERSION " (plan format " << ir::formatTag << ", bytecode format "
           << unsigned(rt::format::version) << ")\n";
      });
  llvm::cl::HideUnrelatedOptions(category());
  if (!loadUserLibraries(argc, argv))
    return Misuse;
  const std::string text = overview(argc > 1 ? llvm::StringRef(argv[1]) : "");
  if (!llvm::cl::ParseCommandLineOptions(argc, argv, text, &llvm::errs()))
    return Misuse;
  for (const Command &c : commands)
    if (*c.sub)
      return c.run();
  llvm::errs() << "collc: no command given (try 'collc --help')\n";
  return Misuse;
}
