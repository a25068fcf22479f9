// lang/Instantiator.h: runs an algorithm file for a shape, giving a plan.
//
// The body is written from the view of one rank r of p. Instantiating runs
// it once per rank, r = 0..p-1, each run appending that rank's ops to its
// program; `instantiateRank` runs it for one rank alone, in time proportional
// to what that rank's run does. Both give the same program for a rank: they
// are the same code (Instantiator.cpp, Machine::run).
//
// An instantiation refuses, with the source position and the values of r, p,
// the parameters and the loop variables at that moment:
//  - a failed `require` (and a p, root or parameter that makes no sense);
//  - an expression with no value: division or modulo by zero, overflow of
//    64-bit integers, a negative exponent or shift, a builtin outside its
//    domain, recursion deeper than 256 calls;
//  - an op that does not fit the shape: a peer outside 0..p-1 or the rank
//    itself, an empty or negative slot range, ranges of different sizes, a
//    buffer the rank does not have or a slot past its end (ir::checkOp), a
//    step lower than the rank's previous op's, an `after` index that is not
//    an earlier op;
//  - a rank's run past its budget of evaluation steps (InstantiateOptions::fuel:
//    an endless loop), or a plan past maxOps ops;
//  - a malformed composition (docs/language.md, "Composition"): an unknown
//    algorithm, a collective mismatch, a bad group, chunks out of bounds or
//    not a multiple of the algorithm's, a root outside the group, a run
//    that runs itself, an op of the run that does not fit the caller; an
//    error inside the run names the inner file's line and notes the run's;
//  - (instantiate only) runs whose messages the k-th send / k-th receive
//    rule would confuse: ranks that share messages but run their runs, or
//    their own messages and a run's, in different orders (a run's messages
//    never match anyone else's);
//  - a plan that cannot fit: above 64 ranks, `instantiate` first estimates
//    the plan's size from a sample of ranks' programs (estimateOps) and
//    refuses, before building anything, a plan estimated at more than twice
//    maxOps or twice the memory the process may use (availableMemory).
#ifndef COLLC_LANG_INSTANTIATOR_H
#define COLLC_LANG_INSTANTIATOR_H

#include "lang/Ast.h"

#include <memory>
#include <utility>

namespace collc::lang {

/// Where the ranks of one instantiation sit: what the topology functions of
/// the language answer (node(x), local(x), rank_at(n, l), coord(x, j),
/// level_size(j), nnodes, ppn, nlevels; docs/language.md, "Topology").
/// Built by makeLayout; without one an instantiation is flat (one node
/// holding every rank in rank order).
struct Layout {
  std::vector<uint32_t> sizes;  ///< level sizes, innermost first
  std::vector<uint32_t> coords; ///< ranks x levels: rank r's coordinate at level j
  uint32_t ranks = 0;
  // Derived by makeLayout:
  std::vector<uint32_t> node;   ///< per rank: its node, numbered densely in slot order
  std::vector<uint32_t> local;  ///< per rank: its index on its node, in slot order
  std::vector<int64_t> rankAt;  ///< nnodes x ppn: the rank at (node, local), -1 if none
  uint32_t nnodes = 1, ppn = 1;
  /// Per level j, rank x's *line*: the ranks whose coordinates equal x's at
  /// every level but j, in the order of their level-j coordinate
  /// (level_count, level_index, level_rank). lines[j] lists the ranks line
  /// after line; lineStart/lineIndex/lineCount are levels x ranks.
  std::vector<std::vector<uint32_t>> lines;
  std::vector<uint32_t> lineStart, lineIndex, lineCount;
};

/// The layout of `ranks` ranks at `coords` (ranks x sizes.size(), innermost
/// first) on levels of `sizes`; an error when a coordinate is out of range or
/// two ranks share a slot.
llvm::Expected<std::shared_ptr<const Layout>>
makeLayout(std::vector<uint32_t> sizes, std::vector<uint32_t> coords, uint32_t ranks);

/// The value of a parameter: an integer, or for an algorithm parameter
/// (`param inner = ring`) an algorithm's name — of the library, or a file
/// ending in .calgo (relative paths are relative to the working directory) —
/// with the arguments that algorithm itself is given (`torus2d.calgo(a = 2)`;
/// its other parameters keep their defaults).
struct ParamValue {
  ParamValue(int64_t v) : number(v) {}
  ParamValue(int v) : number(v) {}
  ParamValue(std::string name) : algorithm(std::move(name)) {}
  ParamValue(const char *name) : algorithm(name) {}
  ParamValue(std::string name, std::vector<std::pair<std::string, ParamValue>> args)
      : algorithm(std::move(name)), args(std::move(args)) {}

  bool isAlgorithm() const { return !algorithm.empty(); }
  bool operator==(const ParamValue &) const = default;

  int64_t number = 0;
  std::string algorithm; ///< non-empty: an algorithm
  /// The algorithm's own arguments, in order (a later one of the same name wins).
  std::vector<std::pair<std::string, ParamValue>> args;
};

/// Parameter values by name (`--set k=4 --set inner=ring`).
using ParamValues = std::vector<std::pair<std::string, ParamValue>>;

/// The value as `--set` takes it: `4`, `ring`, `torus2d.calgo(a=2,inner=ring)`.
std::string formatParamValue(const ParamValue &v);

/// Reads a value in the syntax of formatParamValue (spaces allowed around
/// `(`, `,`, `=` and `)`): an integer, or an algorithm's name (letters,
/// digits and `_`, or a path ending in .calgo) with optional arguments,
/// nested to any depth. The error is a sentence naming what was expected
/// (without the text, which the caller quotes).
llvm::Expected<ParamValue> parseParamValue(llvm::StringRef text);

/// Finds the algorithm a `run` names (docs/language.md, "Composition").
class Resolver {
public:
  virtual ~Resolver();
  /// The algorithm `name` of collective `c` that `caller` runs: a library
  /// algorithm, or for a name ending in .calgo that file (a relative path
  /// is relative to the working directory: the instantiator qualifies it
  /// by the caller's directory first). The module must outlive every
  /// instantiation that uses it. The error is a sentence without position
  /// ("unknown allreduce algorithm 'x' (allreduce algorithms: ...)").
  virtual llvm::Expected<const Module *> resolve(ir::Collective c, llvm::StringRef name,
                                                 const Module &caller) const = 0;
};

struct InstantiateOptions {
  uint32_t ranks = 1;
  uint32_t root = 0; ///< collectives with a root only
  /// Parameter values that replace their defaults (`--set k=4`).
  ParamValues params;
  /// Where the ranks sit (layout->ranks == ranks); null: flat.
  std::shared_ptr<const Layout> layout;
  /// Finds the algorithms of `run`s; null: the module's own (Module::resolver).
  const Resolver *resolver = nullptr;
  /// The evaluation budget, so that an endless loop is an error and not a hang
  /// (docs/language.md, "Errors"): every statement, loop iteration and call is
  /// a step, and the header and each rank's run (a run of another algorithm
  /// inside it included) may take `fuel` steps, plus `fuelPerRank` for each of
  /// the p ranks, plus `fuelPerOp` for each op the rank has emitted so far.
  /// The library takes at most about 4 steps per rank and 40 per op (p up to
  /// 2^20), so the defaults refuse none of it at any p, while a loop that
  /// emits nothing stops after 2^26 steps (about a second); one that emits
  /// ops forever is stopped by maxOps.
  uint64_t fuel = uint64_t(1) << 26;
  uint64_t fuelPerRank = 64;
  uint64_t fuelPerOp = 64;
  /// Most ops one instantiation may emit, over all ranks.
  uint64_t maxOps = uint64_t(1) << 27;
};

/// The refusal of an instantiation that would emit more than
/// InstantiateOptions::maxOps ops (so a caller can word it for its option).
class OpLimitError : public llvm::ErrorInfo<OpLimitError> {
public:
  static char ID;
  OpLimitError(uint64_t limit, std::string message, uint64_t estimate = 0,
               uint64_t memoryLimit = 0)
      : limit(limit), estimate(estimate), memoryLimit(memoryLimit), message(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

  uint64_t limit;      ///< the limit the plan exceeded
  /// The plan's estimated op count when it was refused before instantiating
  /// (estimateOps); 0 when an instantiation got past `limit` ops.
  uint64_t estimate;
  /// Nonzero when the estimate was refused for memory: the bytes the process
  /// may use (availableMemory), which estimate * planBytesPerOp exceeds.
  uint64_t memoryLimit;
  std::string message; ///< positioned, like every instantiation error
};

/// Bytes an ir::Plan takes per op (what the size refusals count).
inline constexpr uint64_t planBytesPerOp = sizeof(ir::Op);

/// The bytes this process may allocate: physical memory, lowered by the
/// address-space and data-segment limits (ulimit -v, -d) when set.
uint64_t availableMemory();

/// An estimate of a plan's size, from a sample of its ranks' programs.
struct OpEstimate {
  uint64_t ops = 0;          ///< estimated ops over all ranks
  uint32_t sampledRanks = 0; ///< programs instantiated to estimate it
};

/// Estimates the op count of instantiate(m, opts) by instantiating ranks 0,
/// p-1 and then ranks spread evenly over 0..p-1 (p/2, p/4, 3p/4, ...), up
/// to 16 of them or until 4 M ops were sampled, and scaling their mean by p
/// (exact for p <= 2 and for algorithms whose ranks emit alike). Fails like
/// instantiate for a refused shape, or with OpLimitError when one rank alone
/// emits more than maxOps ops. Costs at most 16 ranks' programs.
llvm::Expected<OpEstimate> estimateOps(const Module &m, const InstantiateOptions &opts);

/// Whether plans of `m` with `opts`'s parameters need a commutative
/// operation: the file says `commutative`, or an algorithm one of its runs
/// names does (transitively; whether or not the run executes). An error for
/// an unknown algorithm, a parameter that does not exist or recursion.
llvm::Expected<bool> needsCommutative(const Module &m, const InstantiateOptions &opts);

/// The algorithm that `ref` names in `m` with `opts`'s parameters (or their
/// defaults), resolved like a run does; an error as a run gives it.
llvm::Expected<const Module *> resolveAlgorithm(const Module &m, const AlgRef &ref,
                                                const InstantiateOptions &opts);

/// Whether the file's `require` lines accept `opts` (false: they refuse it).
/// An error when p, root or a parameter is invalid or a condition cannot be
/// evaluated.
llvm::Expected<bool> accepts(const Module &m, const InstantiateOptions &opts);

/// The plan for `opts`; Plan::source is the file's name and each op's
/// SourceLine the line of the op statement that emitted it.
llvm::Expected<ir::Plan> instantiate(const Module &m, const InstantiateOptions &opts);

/// Rank `rank`'s program alone (equal to instantiate(m, opts)->programs[rank]).
/// Precondition: none; a rank outside 0..p-1 is an error.
llvm::Expected<ir::Program> instantiateRank(const Module &m, const InstantiateOptions &opts,
                                            uint32_t rank);

/// The plan for `opts` with only `ranks`' programs (each equal to
/// instantiate(m, opts)->programs[r]); every other program is empty. Costs
/// what those ranks' runs do, plus the header, never the whole plan (no size
/// estimate either: a caller that builds a few ranks needs none). The
/// shape's scratch covers the tmp regions of those ranks' runs (the whole
/// plan's may be larger). Fails like instantiateRank, also for a rank
/// outside 0..p-1.
llvm::Expected<ir::Plan> instantiateRanks(const Module &m, const InstantiateOptions &opts,
                                          llvm::ArrayRef<uint32_t> ranks);

/// What the program was doing when `rank` emitted its op `op`: the loop
/// variables as "s = 1, i = 0" (outermost first; empty outside loops), or
/// nullopt when instantiation fails or emits fewer ops.
std::optional<std::string> explain(const Module &m, const InstantiateOptions &opts,
                                   uint32_t rank, uint32_t op);

} // namespace collc::lang

#endif // COLLC_LANG_INSTANTIATOR_H
