// tune/Tuner.h: `collc tune` as a library — from a topology to the
// fastest proven plan per message size (docs/tune.md).
//
// The search, top to bottom:
//  1. Enumerate candidates (Candidates.h): every library algorithm of the
//     collective whose `require` lines accept the shape, each with every
//     value of its parameters, each with every pipelining segment count.
//  2. Compile each at -O2, every pass's result proven (translation
//     validation), cheapest first (by estimated ops), each in a child process
//     (Isolate.h) so that the budget can stop it. A candidate that does not
//     prove — or, with `noncommutative`, is not proven for operations that
//     are only associative, or (allreduce) does not give every rank identical
//     results, which the drop-in requires — is refused, with the reason.
//     Two candidates that compile to the same plan count once.
//  3. Simulate each compiled plan at every size on the topology
//     (model::simulate) and cut its time into α/β/γ terms (Breakdown.h).
//  4. Per size the fastest plan wins (ties: the earlier candidate). Between
//     two sizes with different winners the boundary is placed where those
//     two cross (bisection on the byte count); the first range starts at 0
//     and the last has no upper bound.
// Everything is a pure function of the inputs but for the budget: when it
// runs out the search stops (the candidate in flight is abandoned), keeps
// the best so far and says so (TuneResult::budgetNote).
#ifndef COLLC_TUNE_TUNER_H
#define COLLC_TUNE_TUNER_H

#include "model/Topology.h"
#include "tune/Breakdown.h"
#include "tune/Candidates.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace collc::tune {

/// What to tune for.
struct TuneOptions {
  ir::Collective collective = ir::Collective::Allreduce;
  uint32_t ranks = 0;
  uint32_t root = 0; ///< reduce and bcast
  /// Vector sizes to simulate, bytes, ascending, distinct, each a multiple of
  /// elemBytes (parseSizes makes such a list).
  std::vector<uint64_t> sizes;
  std::string dtype = "double"; ///< its γ on the topology (Topology::gammaOf)
  uint32_t elemBytes = 8;
  /// Only plans proven for operations that are only associative.
  bool noncommutative = false;
  /// Candidates to consider (CandidateOptions).
  CandidateOptions candidates;
  /// Seconds for the whole search; infinity for no limit.
  double budget = 60;
  /// Compile each candidate in a child process, which the budget can stop
  /// mid-way. Without it the budget is checked between candidates only.
  bool isolate = true;
  /// Where progress lines go (null: nowhere).
  llvm::raw_ostream *progress = nullptr;
  /// The clock the budget is measured with (tests give their own).
  std::function<std::chrono::steady_clock::time_point()> now = std::chrono::steady_clock::now;
};

/// What became of a candidate.
enum class Status : uint8_t {
  Compiled,  ///< proven at -O2 and simulated
  Refused,   ///< did not prove (or not as required); `why` says
  Duplicate, ///< compiled to the same plan as an earlier candidate (`duplicateOf`)
  Failed,    ///< its compilation died (`why`: a signal, memory)
  Stopped,   ///< the budget ran out while it compiled
  NotTried,  ///< the budget ran out before it
};
llvm::StringRef name(Status s);

/// A candidate's simulated time at one size.
struct SizeTime {
  double time = 0; ///< seconds
  Breakdown terms;
};

/// One candidate and what became of it.
struct CandidateResult {
  Candidate candidate;
  /// The plan's name in the bundle and rules: the candidate's name, with
  /// "@TOPOLOGY" when the plan depends on where the ranks sit (it uses the
  /// topology functions and the topology has several nodes).
  std::string name;
  Status status = Status::NotTried;
  std::string why;
  size_t duplicateOf = 0; ///< Duplicate: index in TuneResult::candidates
  /// Compiled: the .cplan, its proof recorded, with an empty algorithm name
  /// (the name goes in when it is bundled).
  std::vector<uint8_t> plan;
  uint64_t ops = 0, messages = 0;
  bool commutative = true; ///< the compiled plan needs a commutative operation
  std::vector<SizeTime> times; ///< Compiled: one per TuneOptions::sizes
  /// Compiled: the -O2 passes undone because the simulator predicted their
  /// result slower at one of TuneOptions::sizes, one line each.
  std::vector<std::string> undone;
};

/// A range of message sizes and the candidate that serves it.
/// Range::candidate when native MPI serves the range (collc tune --measure
/// found it fastest there).
inline constexpr size_t nativeRange = SIZE_MAX;

struct Range {
  uint64_t minBytes = 0;
  uint64_t maxBytes = 0; ///< exclusive; rt::bundle::unbounded for "and up"
  size_t candidate = 0;  ///< index in TuneResult::candidates, or nativeRange
};

/// What `collc tune --measure` timed at one size, each the median of the
/// slowest rank's time over interleaved rounds.
struct Measurement {
  std::vector<size_t> timed;  ///< candidates (indices), the model's fastest first
  std::vector<double> times;  ///< seconds each; negative: the call failed (not measured)
  double native = 0;          ///< native MPI's time; negative: not measured
  std::optional<size_t> winner; ///< the fastest measured plan; none: native
};

/// The choice at one size.
struct Choice {
  size_t winner = 0;
  /// The fastest candidate of another library algorithm, if any.
  std::optional<size_t> runnerUp;
};

/// The outcome of a search.
struct TuneResult {
  TuneOptions options;
  std::string topologyName;
  std::vector<std::string> levelNames;
  std::vector<CandidateResult> candidates; ///< enumeration order
  std::vector<NotFitting> notFitting;
  std::vector<Choice> choices; ///< one per size
  std::vector<Range> ranges;   ///< ascending, tiling [0, unbounded)
  /// --measure: one per size (empty: the model alone chose). The ranges are
  /// then the measured winners'.
  std::vector<Measurement> measured;
  bool budgetExhausted = false;
  std::string budgetNote; ///< what the budget cut, when it cut anything
};

/// Runs the search. Errors: nothing fits (no candidate accepts the shape),
/// or no candidate compiled (every one refused or stopped); misuse such as
/// more ranks than the topology has slots.
llvm::Expected<TuneResult> tune(const model::Topology &topo, const TuneOptions &opts);

/// Sizes from "MIN..MAX" (MIN, every power of two strictly between, MAX) or
/// "A,B,C" (K, M, G: powers of 1024), each rounded down to a multiple of
/// `elemBytes` and at least one element; ascending and distinct.
/// The candidates --measure times at size index `s`: the `k` compiled
/// candidates predicted fastest there, fastest first.
std::vector<size_t> measureCandidates(const TuneResult &r, size_t s, size_t k);

/// Sets r.measured (one per size) and rebuilds r.ranges from the measured
/// winners: a plan wins a size only when its time is below native MPI's and
/// every other timed plan's (a size whose native time is negative was not
/// measured: the model's choice stays); a boundary between two sizes of different
/// winners is the roundest size near their geometric middle.
void applyMeasurements(TuneResult &r, std::vector<Measurement> measured);

/// Where a range of one winner ends and the next begins between two sizes
/// measured or chosen at, `lo` < `hi` (multiples of `e`): the roundest size
/// near their geometric middle, in (lo, hi].
uint64_t boundaryBetween(uint64_t lo, uint64_t hi, uint64_t e);

llvm::Expected<std::vector<uint64_t>> parseSizes(llvm::StringRef text, uint32_t elemBytes);

/// "8 B", "64 KiB", "1.5 MiB": a byte count for people.
std::string formatBytes(uint64_t bytes);

/// "5.12 us", "1.20 ms", "2.35 s": a time for people.
std::string formatSeconds(double seconds);

/// What an algorithm's topology functions (node(r), ppn...) see of ranks
/// placed by `pl` on `topo` (an error when two ranks share a slot).
llvm::Expected<std::shared_ptr<const lang::Layout>> layoutOf(const model::Topology &topo,
                                                             const model::Placement &pl);

} // namespace collc::tune

#endif // COLLC_TUNE_TUNER_H
