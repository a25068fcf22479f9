// tune/Breakdown.h: where a simulated plan's time goes — its critical
// path cut into the α, β and γ terms of the cost model (docs/tune.md, "Why").
//
// The simulator's critical path (model::SimResult::criticalPath) is a chain of
// ops from time 0 to the plan's finish. Each op on it adds the time from the
// later of its own start and the previous op's end to its own end, and that
// time is split into the model's terms, last first:
//  - a message (its send op) of b bytes across level j: α_j, then b·β_j, and
//    what is left is time it waited for a shared link (`contention`); after
//    waiting for a shared link its latency overlaps the previous message's
//    on that link, so its transfer is taken first;
//  - a recv: nothing (it is done when its message arrives);
//  - a recv_reduce or reduce of b bytes: b·γ; a copy: b·copyβ.
// So the terms add up to the plan's time (to rounding), and each names what a
// faster machine would have to improve to make this plan faster.
#ifndef COLLC_TUNE_BREAKDOWN_H
#define COLLC_TUNE_BREAKDOWN_H

#include "model/Simulator.h"

#include <string>
#include <vector>

namespace collc::tune {

/// The terms of one simulated time, in seconds.
struct Breakdown {
  std::vector<double> alpha;         ///< per level: message latencies on the critical path
  std::vector<double> beta;          ///< per level: bytes × β of those messages
  /// Per level: the messages whose latency the critical path pays, and the
  /// bytes whose transfer time is on it (a message that overlaps time the
  /// path already spent elsewhere counts for what it adds only).
  std::vector<uint32_t> messages;
  std::vector<uint64_t> bytes;
  double gamma = 0;                  ///< reductions
  double copy = 0;                   ///< local copies
  double contention = 0;             ///< waiting for a shared link

  double total() const;
};

/// The breakdown of `sim`, a simulation of `plan` on `topo` with the
/// critical path traced (SimOptions::criticalPath) and reduction cost `gamma`.
Breakdown breakdown(const ir::Plan &plan, const model::Topology &topo,
                    const model::SimResult &sim, double gamma);

/// One term of a breakdown: "α network", "β node", "γ", "copy", "contention",
/// and the same as an ASCII key for JSON ("alpha.network", "gamma").
struct Term {
  std::string name;
  std::string key;
  double seconds = 0;
  /// α and β terms: the messages on the critical path across that level
  /// and their bytes (0 for the others).
  uint32_t messages = 0;
  uint64_t bytes = 0;
};

/// Every term of `b`, its levels named `levels` (the topology's, innermost
/// first), in a fixed order: α per level, β per level, γ, copy, contention.
std::vector<Term> terms(const Breakdown &b, const std::vector<std::string> &levels);

} // namespace collc::tune

#endif // COLLC_TUNE_BREAKDOWN_H
