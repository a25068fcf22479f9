// schedules/Generators.h: the algorithm library and its registry.
//
// Every algorithm is a file of schedules/ in the algorithm language
// (docs/language.md), compiled into the binary as text and parsed the first
// time the registry is used. A generator is the file instantiated for a
// shape: a pure function of (ranks, root, parameters) returning a
// well-formed ir::Plan; it never touches MPI. Each file opens with the
// algorithm in prose and its α/β/γ cost.
#ifndef COLLC_SCHEDULES_GENERATORS_H
#define COLLC_SCHEDULES_GENERATORS_H

#include "lang/Ast.h"
#include "lang/Instantiator.h"
#include "ir/Plan.h"

#include "llvm/Support/Error.h"

#include <string>
#include <utility>
#include <vector>

namespace collc::sched {

/// The default limit on a generated plan's ops (over all ranks): about 1.2 GB
/// as an ir::Plan. Ring allreduce at p = 2048 (8.4 M ops) fits; p = 4096
/// (33.5 M) does not.
inline constexpr uint64_t defaultMaxOps = uint64_t(1) << 24;

/// What a generator is asked for.
struct GenOptions {
  uint32_t ranks = 1;
  uint32_t root = 0; ///< reduce only
  /// Values for the file's `param`s (the rest keep their defaults): integers,
  /// or algorithms' names for algorithm parameters ({"inner", "ring"}).
  lang::ParamValues params = {};
  /// A plan with more ops is refused (generate returns an error).
  uint64_t maxOps = defaultMaxOps;
  /// Where the ranks sit (a topology's placement, lang::makeLayout); null: flat.
  std::shared_ptr<const lang::Layout> layout = nullptr;
};

/// A parameter of a library algorithm, as a tool enumerating candidates
/// sees it (e.g. `collc tune`): an integer with its default, or an
/// algorithm choice (`param inner = ring`) with every value it may take.
struct Parameter {
  std::string name;
  bool isAlgorithm = false;
  int64_t defaultValue = 0;     ///< an integer parameter's default
  std::string defaultAlgorithm; ///< an algorithm parameter's default
  /// An algorithm parameter: the collectives of the runs that use it.
  std::vector<ir::Collective> collectives;
  /// An algorithm parameter: the library algorithms it may name, in registry
  /// order — those of every collective in `collectives` that do not make the
  /// algorithm run itself. Whether a choice fits a shape is the plan's
  /// `require` lines' to say (Algorithm::accepts).
  std::vector<std::string> choices;
};

/// An algorithm of the library.
struct Algorithm {
  llvm::StringRef name;
  ir::Collective collective;
  /// The plan is only correct for commutative operations (with the default
  /// parameters; a composed algorithm's depends on its choices:
  /// lang::needsCommutative).
  bool needsCommutative;
  /// The plan is also correct with MPI_IN_PLACE.
  bool inPlace;
  /// One line for `collc list`.
  llvm::StringRef summary;
  /// The algorithm file: its name ("ring.calgo") and parsed form.
  llvm::StringRef file;
  const lang::Module *module;
  /// A user's file (addUserAlgorithms), not the library's: `file` is its
  /// path, and nothing about it has been proven by collc's tests.
  bool user = false;

  /// Whether the file's `require` lines accept `o` (e.g. a power of two).
  /// False also when `o` is not a valid shape for the algorithm.
  bool accepts(const GenOptions &o) const;
  /// The plan. Precondition: accepts(o).
  ir::Plan build(const GenOptions &o) const;
  /// The file's parameters, in the order of its header.
  std::vector<Parameter> parameters() const;
};

/// Finds what a `run` names: the library's algorithms by collective and
/// name, and algorithm files (a name ending in .calgo) read once and kept.
/// Every library module uses it; a tool sets it on files it parses.
const lang::Resolver &libraryResolver();

/// Adds the user's algorithms to the registry: every file ending in .calgo
/// in each folder of `folders` (in name order), then each of `files`, each
/// placed after the algorithms of its collective. Call it at most once,
/// before anything uses the registry. A file that is read twice (a folder
/// given twice) counts once. Errors, one line each: a folder that cannot be
/// read, a file that does not parse (file:line:col), a file whose collective
/// and algorithm name another file already has (naming both files), and a
/// file whose `run`s cannot be resolved. With `skipped` null any error fails
/// the call and nothing is added; otherwise the files in error are left out,
/// the others added, and the errors appended to `skipped` (the drop-in, which
/// never ends a job over a user's file).
llvm::Error addUserAlgorithms(llvm::ArrayRef<std::string> folders,
                              llvm::ArrayRef<std::string> files,
                              std::vector<std::string> *skipped = nullptr);

/// The folders of a COLLC_LIBRARY value: a ':'-separated list, blanks
/// trimmed, empty entries dropped.
std::vector<std::string> splitLibraryPath(llvm::StringRef value);

/// Every algorithm: the library's grouped by collective in a fixed order,
/// each collective's user algorithms after its library ones.
llvm::ArrayRef<Algorithm> algorithms();

/// The algorithm `name` for collective `c`, or nullptr.
const Algorithm *findAlgorithm(ir::Collective c, llvm::StringRef name);

/// For an error about `name`, which is no algorithm of `c`: "'ring' is an
/// allreduce, reduce_scatter_block and allgather algorithm" when the library
/// has it for other collectives, else empty.
std::string elsewhereNote(ir::Collective c, llvm::StringRef name);

/// Validates `opts` and instantiates the algorithm (errors name the file,
/// line and values, docs/language.md "Errors"); a plan of more than
/// opts.maxOps ops is an error, returned as soon as the instantiation gets
/// there.
llvm::Expected<ir::Plan> generate(ir::Collective c, llvm::StringRef name,
                                  const GenOptions &opts);

} // namespace collc::sched

#endif // COLLC_SCHEDULES_GENERATORS_H
