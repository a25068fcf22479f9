// schedules/Generators.h: the algorithm generators and their registry.
//
// A generator is a pure function of (ranks, root, options) that returns a
// well-formed ir::Plan; it never touches MPI. Each one's source file opens
// with the algorithm in prose and its α/β/γ cost (α latency per message, β
// time per byte moved, γ time per byte reduced, n bytes per rank).
#ifndef COLLC_SCHEDULES_GENERATORS_H
#define COLLC_SCHEDULES_GENERATORS_H

#include "ir/Plan.h"

#include "llvm/Support/Error.h"

namespace collc::sched {

/// The default limit on a generated plan's ops (over all ranks): about 1.2 GB
/// as an ir::Plan. Ring allreduce at p = 2048 (8.4 M ops) fits; p = 4096
/// (33.5 M) does not.
inline constexpr uint64_t defaultMaxOps = uint64_t(1) << 24;

/// What a generator is asked for.
struct GenOptions {
  uint32_t ranks = 1;
  uint32_t root = 0; ///< reduce only
  /// A plan with more ops is refused (generate returns an error).
  uint64_t maxOps = defaultMaxOps;
};

/// Signature of a generator. Preconditions (checked by `generate`):
/// ranks >= 1, root < ranks.
using GeneratorFn = ir::Plan (*)(const GenOptions &);

/// A registered algorithm.
struct Algorithm {
  llvm::StringRef name;
  ir::Collective collective;
  /// The plan is only correct for commutative operations.
  bool needsCommutative;
  /// The plan is also correct with MPI_IN_PLACE.
  bool inPlace;
  /// One line for `collc list`.
  llvm::StringRef summary;
  GeneratorFn build;
};

/// Every registered algorithm, grouped by collective, in a fixed order.
llvm::ArrayRef<Algorithm> algorithms();

/// The algorithm `name` for collective `c`, or nullptr.
const Algorithm *findAlgorithm(ir::Collective c, llvm::StringRef name);

/// Validates `opts` and runs the generator; a plan of more than opts.maxOps
/// ops is an error, returned as soon as the generator gets there.
llvm::Expected<ir::Plan> generate(ir::Collective c, llvm::StringRef name,
                                  const GenOptions &opts);

// --- the generators ----------------------------------------------------------

ir::Plan buildAllreduceBinaryTree(const GenOptions &o);
ir::Plan buildAllreduceRecursiveDoubling(const GenOptions &o);
ir::Plan buildAllreduceRabenseifner(const GenOptions &o);
ir::Plan buildAllreduceBinaryBlocks(const GenOptions &o);
ir::Plan buildAllreduceRing(const GenOptions &o);
ir::Plan buildReduceBinomial(const GenOptions &o);
ir::Plan buildReduceBinaryTree(const GenOptions &o);
ir::Plan buildReduceRabenseifner(const GenOptions &o);

} // namespace collc::sched

#endif // COLLC_SCHEDULES_GENERATORS_H
