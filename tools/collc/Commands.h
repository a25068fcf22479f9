// tools/collc/Commands.h: the subcommands of `collc`, one source file each.
//
// Each command file defines its llvm::cl::SubCommand and options and a run
// function returning the exit status: 0 success (for verify: proven),
// 1 the plan is disproved or refused (every diagnostic class but `syntax`,
// `invalid` included), 2 the input cannot be read or is not a plan (`syntax`),
// or the command is misused.
#ifndef COLLC_TOOLS_COMMANDS_H
#define COLLC_TOOLS_COMMANDS_H

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace collc::tool {

enum ExitCode : int { Success = 0, Refused = 1, Misuse = 2 };

/// Options shared by every command are in this category; --help shows only it.
llvm::cl::OptionCategory &category();

/// Prints `collc: <err>` and returns Misuse.
int reportMisuse(llvm::Error err);

/// Prints `collc: <err>` for an error of the plan reader and returns its exit
/// code: Refused for an `invalid` plan (it was read, and it is not a correct
/// plan), Misuse for a file that cannot be read or is not a plan (`syntax`).
int reportReadError(llvm::Error err);

/// Writes `text` to `path` ("-" = stdout); returns false after reporting.
bool writeOutput(llvm::StringRef path, llvm::StringRef text);

/// Adds the user's algorithms to the registry (--library DIR, COLLC_LIBRARY,
/// and the .calgo files of `tune --algorithms`), reading them from argv
/// before the options are parsed; false after printing one line per error.
bool loadUserLibraries(int argc, char **argv);
/// The --library folders given (not COLLC_LIBRARY's), in order.
const std::vector<std::string> &libraryFlags();

struct Command {
  llvm::cl::SubCommand *sub;
  int (*run)();
};

#define COLLC_DECLARE_COMMAND(Name)                                                      \
  llvm::cl::SubCommand &Name##Command();                                                 \
  int run##Name();
COLLC_DECLARE_COMMAND(List)
COLLC_DECLARE_COMMAND(Gen)
COLLC_DECLARE_COMMAND(Verify)
COLLC_DECLARE_COMMAND(Compile)
COLLC_DECLARE_COMMAND(Disasm)
COLLC_DECLARE_COMMAND(Bundle)
COLLC_DECLARE_COMMAND(Opt)
COLLC_DECLARE_COMMAND(Simulate)
COLLC_DECLARE_COMMAND(Calibrate)
COLLC_DECLARE_COMMAND(Draw)
COLLC_DECLARE_COMMAND(Explain)
COLLC_DECLARE_COMMAND(Tune)
#undef COLLC_DECLARE_COMMAND

} // namespace collc::tool

#endif // COLLC_TOOLS_COMMANDS_H
