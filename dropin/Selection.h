// dropin/Selection.h: which plan serves a call — the default
// decision table and the precedence of the overrides (docs/dropin.md,
// "Which plan serves a call" and "Default decision table").
//
// Precedence: COLLC_ALGORITHM, then the first matching COLLC_RULES rule, then
// the first plan file or bundle entry from COLLC_PLAN_PATH that fits the call,
// then the default table. A name picked by the first two resolves to a plan
// file of that algorithm name when one fits the communicator, else to the
// generator of that name. Whatever was picked, a plan that needs a commutative
// operation is never used for a non-commutative one: the order-preserving
// choice of the default table replaces it, and the substitution is reported.
//
// Every input of the decision is the same on all ranks of a communicator (the
// MPI standard requires equal count, datatype, op and root; the configuration
// is checked to agree at MPI_Init), so all ranks always decide alike — the one
// property a collective cannot do without. In-place use therefore does not
// enter the decision: MPI_Reduce passes MPI_IN_PLACE at the root only.
// MPI-free, LLVM-free.
#ifndef COLLC_DROPIN_SELECTION_H
#define COLLC_DROPIN_SELECTION_H

#include "dropin/Config.h"

#include <functional>
#include <span>
#include <string>

namespace collc::dropin {

/// What selection knows about a call. All fields agree across the ranks.
struct CallTraits {
  Coll collective = Coll::Allreduce;
  uint32_t ranks = 1;
  uint32_t root = 0;
  uint64_t count = 0; ///< elements of the whole vector (allgather: the result)
  uint64_t bytes = 0; ///< count × type size
  bool commutative = true;
  bool predefinedOp = true;
};

/// The default table's choice for a call and why (one line, for logs).
struct DefaultChoice {
  const char *algorithm;
  const char *reason;
};
DefaultChoice defaultAlgorithm(const CallTraits &t);

/// Below this many bytes a vector is "short" (for predefined ops).
inline constexpr uint64_t shortVectorBytes = 2048;
/// The same for user-defined operations: halving-doubling's extra rounds
/// cost more than the combining it saves until longer vectors
/// (bench/userop-table.sh: recursive doubling ahead to 4-64 KiB at p = 2
/// and 4).
inline constexpr uint64_t shortVectorBytesUserOp = 16 << 10;
/// Non-power-of-two communicators up to this size use the ring for long vectors.
inline constexpr uint32_t ringMaxRanks = 8;
/// Scan and exscan: from this many bytes on, more than 4 ranks use Brent-Kung.
inline constexpr uint64_t scanLongBytes = 64 << 10;
/// Allgather (bytes of the whole result): Bruck below the short limit,
/// recursive doubling (p a power of two) below the long one, else the ring.
inline constexpr uint64_t allgatherShortBytes = 80 << 10;
inline constexpr uint64_t allgatherLongBytes = 512 << 10;
/// Bcast: the binomial tree below this or on fewer ranks than bcastMinRanks,
/// scatter + allgather otherwise.
inline constexpr uint64_t bcastShortBytes = 12 << 10;
inline constexpr uint32_t bcastMinRanks = 8;

/// Alltoall (bytes of one block, MPICH's crossovers): Bruck up to the short
/// limit on at least alltoallBruckMinRanks ranks, every exchange posted at
/// once (linear) below the medium one, else the pairwise exchange.
inline constexpr uint64_t alltoallShortBlockBytes = 256;
inline constexpr uint32_t alltoallBruckMinRanks = 8;
inline constexpr uint64_t alltoallMediumBlockBytes = 32 << 10;
/// Gather and scatter (bytes of one block, Open MPI's intermediate block
/// size): the binomial tree below, linear from it on (a block relayed up or
/// down the tree costs more than the latency it saves).
inline constexpr uint64_t gatherLinearBlockBytes = 6000;

/// A plan file (or bundle entry) that fits the communicator's collective and size.
struct FileCandidate {
  int id = -1; ///< the caller's index
  uint32_t root = 0;
  uint64_t minBytes = 0, maxBytes = ~uint64_t(0);
  bool needsCommutative = true;
  std::string_view algorithm;
  std::string_view origin; ///< "dir/x.cplan" or "dir/b.cbundle#1"
};

/// Where a choice came from.
enum class Origin : uint8_t { Forced, Rule, File, Default };
const char *name(Origin o);

/// Why the chosen plan is not the one first picked.
enum class Substitution : uint8_t {
  None,
  NeedsCommutative, ///< it needs a commutative op; the op is not
  NoSuchPlan,       ///< the name has no generator and no fitting plan file
  Unverified,       ///< COLLC_VERIFY: it did not verify
  DoesNotFit,       ///< its file's `require` lines refuse the communicator (size, root)
};

struct Selection {
  bool native = false;   ///< go to native MPI: "native" was picked, or noPlan
  bool noPlan = false;   ///< native because not even the default plan verified
  int fileId = -1;       ///< >= 0: this plan file; else the generator `algorithm`
  std::string algorithm; ///< the plan's algorithm name
  Origin origin = Origin::Default;
  Substitution substitution = Substitution::None;
  std::string detail; ///< one line: what was picked, from where, and any substitution
};

/// What select() may ask about plans.
struct PlanQuery {
  /// A generator of this name exists for the collective, and whether its
  /// plans need a commutative operation.
  std::function<bool(Coll, std::string_view name, bool &needsCommutative)> generator;
  /// COLLC_VERIFY: whether this plan proves (false: skip it). Null: all do.
  std::function<bool(int fileId)> fileVerifies;
  std::function<bool(Coll, std::string_view name, uint32_t root)> generatedVerifies;
  /// Whether the generator's `require` lines accept the communicator and
  /// `root`. Null: all do.
  std::function<bool(Coll, std::string_view name, uint32_t root)> generatorFits;
};

/// Picks the plan for `t`. `rules` are the config's rules, `files` the plan
/// files fitting the collective and communicator size, in COLLC_PLAN_PATH order.
Selection select(const Config &config, const CallTraits &t, std::span<const FileCandidate> files,
                 const PlanQuery &query);

} // namespace collc::dropin

#endif // COLLC_DROPIN_SELECTION_H
