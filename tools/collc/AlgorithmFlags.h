// tools/collc/AlgorithmFlags.h: algorithms on the command line.
//
// `gen`, `verify`, `compile`, `opt`, `simulate` and `draw` take an
// algorithm wherever they take a plan: an algorithm file (a path ending in
// .calgo, docs/language.md) or the name of a library algorithm (`collc list`;
// a name that is no file, with --collective C, default allreduce). Either is
// instantiated the same way, for --ranks P [--root R] [--set NAME=VALUE]...
// on --topology T [--mapping M] (default flat); `verify` also takes a range
// of rank counts (--ranks A..B, both included) and --roots all. `simulate`'s
// --topology is also the machine it predicts on.
#ifndef COLLC_TOOLS_ALGORITHMFLAGS_H
#define COLLC_TOOLS_ALGORITHMFLAGS_H

#include "compiler/Verifier.h"
#include "lang/Instantiator.h"
#include "model/Topology.h"
#include "tune/Tuner.h"

#include "llvm/Support/Error.h"

namespace collc::tool {

/// True for an input naming an algorithm: a path ending in .calgo, or a
/// name that is no file and has no '/' or '.' (a library algorithm).
bool isAlgorithm(llvm::StringRef input);

/// The algorithm `input` names (precondition: isAlgorithm(input)): the parsed
/// file, or the library's algorithm of --collective; it lives as long as the
/// process. An error for a file that does not parse or an unknown name.
llvm::Expected<const lang::Module *> algorithmFromFlags(llvm::StringRef input);

/// The inclusive range of rank counts of --ranks ("8" or "1..64"); an error
/// when it is missing or malformed, or a range where `allowRange` is false.
llvm::Expected<std::pair<uint32_t, uint32_t>> ranksFromFlags(bool allowRange);

/// --root (default 0).
uint32_t rootFromFlag();

/// The --topology file with --mapping applied (block | round-robin by the
/// level inside the outermost); null without --topology. Read once.
llvm::Expected<const model::Topology *> topologyFromFlags();

/// Where p ranks sit on --topology (topologyFromFlags); null (flat)
/// without --topology.
llvm::Expected<std::shared_ptr<const lang::Layout>> layoutFromFlags(uint32_t p);

/// What an algorithm's topology functions see of placed ranks (one
/// definition, the tuner's).
using tune::layoutOf;

/// The --set NAME=VALUE parameters: VALUE an integer, or an algorithm's
/// name (of the library, or a file ending in .calgo) for an algorithm
/// parameter.
llvm::Expected<lang::ParamValues> paramsFromFlags();

/// The options an algorithm is instantiated with for p ranks: --root, --set,
/// the layout of --topology, the library to resolve runs, `maxOps`.
llvm::Expected<lang::InstantiateOptions> instantiateOptionsFromFlags(uint32_t p,
                                                                     uint64_t maxOps);

/// An error when --ranks, --set, --topology or --mapping is given for
/// `input`, a plan file — --topology and --mapping are accepted where they
/// are the machine the plan is drawn or simulated on (`allowTopology`, and
/// always under simulate).
llvm::Error refuseAlgorithmFlags(llvm::StringRef input, bool allowTopology = false);

/// Which of the three forms of a plan a command read.
enum class InputForm {
  Text,      ///< format v1 (YAML)
  Compiled,  ///< a .cplan (bytecode), disassembled
  Algorithm, ///< an algorithm file or library algorithm, instantiated
};

/// "plan text", "compiled plan", "algorithm, instantiated for 4 ranks".
std::string describe(InputForm form, uint32_t ranks);

/// The plan `input` names: a format-v1 file or a compiled plan (.cplan,
/// recognized by its bytes; "-" = stdin), or an algorithm (isAlgorithm)
/// instantiated for --ranks P and the other flags (which a plan file
/// refuses), at most `maxOps` ops. A bundle is an error (it holds several
/// plans). `module` receives the algorithm, if any, `used` the options it was
/// instantiated with, and `form` which form it was.
llvm::Expected<ir::Plan> loadPlan(llvm::StringRef input, const lang::Module **module,
                                  lang::InstantiateOptions *used,
                                  uint64_t maxOps = uint64_t(1) << 24,
                                  InputForm *form = nullptr);

/// Prints the diagnostics one a line, each with what the algorithm's program
/// was doing when it emitted the op (its loop variables, and the runs it is
/// inside), when the plan came from `module` instantiated with `opts` and was
/// not transformed.
void printDiagnostics(std::vector<compiler::Diagnostic> diags, const lang::Module *module,
                      const lang::InstantiateOptions &opts, llvm::raw_ostream &os);

} // namespace collc::tool

#endif // COLLC_TOOLS_ALGORITHMFLAGS_H
