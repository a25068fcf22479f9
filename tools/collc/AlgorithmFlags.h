// tools/collc/AlgorithmFlags.h: algorithm files on the command line.
//
// `gen`, `verify`, `compile` and `opt` take an algorithm file (a path ending
// in .calgo, docs/language.md) wherever they take a plan, instantiated for
// --ranks P [--root R] [--set NAME=VALUE]...; `verify` also takes a range of
// rank counts (--ranks A..B, both included) and --roots all.
#ifndef COLLC_TOOLS_ALGORITHMFLAGS_H
#define COLLC_TOOLS_ALGORITHMFLAGS_H

#include "compiler/Verifier.h"
#include "compiler/lang/Instantiator.h"
#include "compiler/model/Topology.h"

#include "llvm/Support/Error.h"

namespace collc::tool {

/// True for a path naming an algorithm file (ending in .calgo).
bool isAlgorithmFile(llvm::StringRef path);

/// The inclusive range of rank counts of --ranks ("8" or "1..64"); an error
/// when it is missing or malformed, or a range where `allowRange` is false.
llvm::Expected<std::pair<uint32_t, uint32_t>> ranksFromFlags(bool allowRange);

/// --root (default 0).
uint32_t rootFromFlag();

/// Where p ranks sit on --topology, placed by its mapping or --mapping
/// (block | round-robin by the level inside the outermost); null (flat)
/// without --topology.
llvm::Expected<std::shared_ptr<const lang::Layout>> layoutFromFlags(uint32_t p);

/// The machine of --topology with --mapping applied (read once); null
/// without --topology.
llvm::Expected<const model::Topology *> topologyFromFlags();

/// What an algorithm's topology functions (node(r), ppn...) see of ranks
/// placed by `pl` on `topo` (an error when two ranks share a slot).
llvm::Expected<std::shared_ptr<const lang::Layout>> layoutOf(const model::Topology &topo,
                                                             const model::Placement &pl);

/// The --set NAME=VALUE parameters.
llvm::Expected<std::vector<std::pair<std::string, int64_t>>> paramsFromFlags();

/// An error when --ranks or --set is given for `input`, a plan file, or
/// --topology / --mapping unless `allowTopology` (a plan simulated on it).
llvm::Error refuseAlgorithmFlags(llvm::StringRef input, bool allowTopology = false);

/// The plan `input` names: a format-v1 file ("-" = stdin), or an algorithm
/// file instantiated for --ranks P, --root and --set (which a plan file
/// refuses), at most `maxOps` ops. `module` receives the parsed algorithm
/// file, if any, and `used` the options it was instantiated with.
llvm::Expected<ir::Plan> loadPlan(llvm::StringRef input, std::optional<lang::Module> *module,
                                  lang::InstantiateOptions *used,
                                  uint64_t maxOps = uint64_t(1) << 24);

/// Prints the diagnostics one a line, each with what the algorithm file's
/// program was doing when it emitted the op (its loop variables), when the
/// plan came from `module` instantiated with `opts` and was not transformed.
void printDiagnostics(std::vector<compiler::Diagnostic> diags, const lang::Module *module,
                      const lang::InstantiateOptions &opts, llvm::raw_ostream &os);

} // namespace collc::tool

#endif // COLLC_TOOLS_ALGORITHMFLAGS_H
