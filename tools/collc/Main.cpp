// tools/collc/Main.cpp: `collc`, the command line of the collective compiler.
#include "tools/collc/Commands.h"

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

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  const Command commands[] = {
      {&ListCommand(), runList},
      {&GenCommand(), runGen},
      {&VerifyCommand(), runVerify},
      {&CompileCommand(), runCompile},
      {&DisasmCommand(), runDisasm},
      {&BundleCommand(), runBundle},
      {&OptCommand(), runOpt},
  };
  llvm::cl::SetVersionPrinter(
      [](llvm::raw_ostream &os) { os << "collc " COLLC_VERSION " (plan format collc-plan/1)\n"; });
  llvm::cl::HideUnrelatedOptions(category());
  if (!llvm::cl::ParseCommandLineOptions(
          argc, argv,
          "collc: compile, verify and inspect MPI collective-communication plans\n\n"
          "  collc list                         algorithms and their properties\n"
          "  collc gen ALG --collective C --ranks P [--root R] [-o FILE]\n"
          "  collc verify FILE|- [--noncommutative] [--require-identical] [--max-errors N] [--stats]\n"
          "  collc opt FILE|- [-O0|-O1|-O2] [--passes=a,b] [-o FILE] [--print-after-all] [--stats]\n"
          "  collc compile FILE|- -o FILE.cplan [-O0|-O1|-O2] [--stats] [--no-verify]\n"
          "  collc disasm FILE.cplan [-o FILE.yaml]\n"
          "  collc bundle FILE.cplan[@MIN-MAX]... -o FILE.cbundle | --list FILE.cbundle\n\n"
          "Run 'collc COMMAND --help' for a command's options.\n",
          &llvm::errs()))
    return Misuse;
  for (const Command &c : commands)
    if (*c.sub)
      return c.run();
  llvm::errs() << "collc: no command given (try 'collc --help')\n";
  return Misuse;
}
