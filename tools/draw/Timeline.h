// tools/draw/Timeline.h: when each op of a plan runs, as a diagram draws it.
//
// A Timeline places every op of every rank on one time axis: a start, an end,
// and for the two ends of a message the moment the message leaves or arrives
// (where its arrow starts and ends). It also records, per op, which op decided
// its start (its *binding* predecessor: a local dependency, or for a receive
// the matching send), so the critical path is the chain of binding
// predecessors that ends at the op finishing last.
//
// logicalTimeline() gives the dependency order that needs no machine model:
// every op takes one step. simulatedTimeline() gives the times of the machine
// model (model/Simulator.h) in a unit that suits the plan's span
// (ns, us, ms or s), with the simulator's own critical path. Any other
// producer fills in the same struct; the drawing code reads only this.
#ifndef COLLC_TOOLS_DRAW_TIMELINE_H
#define COLLC_TOOLS_DRAW_TIMELINE_H

#include "model/Simulator.h"
#include "compiler/passes/Analysis.h"
#include "ir/Plan.h"

#include <optional>
#include <string>
#include <vector>

namespace collc::draw {

/// One op of a plan: op `op` of rank `rank`.
struct OpRef {
  uint32_t rank = 0, op = 0;
  bool operator==(const OpRef &) const = default;
};

/// When one op runs, in the timeline's unit.
struct OpTime {
  double start = 0, end = 0;
  /// For a send: when its message leaves; for a receive: when it arrives.
  double wire = 0;
  /// The op whose completion (or message, for a receive) decided `start`;
  /// none for an op that starts at once.
  std::optional<OpRef> binding;
  /// Never runs: the op waits, directly or not, on a wait-for cycle
  /// (a deadlocked plan). It is placed after its local predecessors.
  bool stuck = false;
  /// More hover text from the timeline's producer (what the op waited for,
  /// the bytes it moves), one line or several; may be empty.
  std::string detail;
};

struct Timeline {
  /// times[rank][op], one entry per op of the plan.
  std::vector<std::vector<OpTime>> times;
  double span = 0;           ///< the latest end
  std::string unit = "step"; ///< "step" (logical), or "ns", "us", "ms", "s" (simulated)
  bool logical = true;       ///< every op one step long; arrows go from one step to a later one
  /// What the times are, for the subtitle ("simulated on uniform, ..."; logical: empty).
  std::string description;
  /// The critical path as its producer found it (the simulator's); when
  /// empty, criticalPath() derives it from the bindings.
  std::vector<OpRef> path;

  const OpTime &at(OpRef r) const { return times[r.rank][r.op]; }
  /// The critical path, first op first: `path` if given, else the binding
  /// chain that ends at the op finishing last (the lowest rank, then op,
  /// among ties). Empty for an empty plan.
  std::vector<OpRef> criticalPath() const;
};

/// A unit's name as people read it: "µs" for "us", else the unit itself.
std::string unitLabel(llvm::StringRef unit);

/// Dependency order: each op is one step long and starts one step after the
/// latest of its local predecessors and, for a receive, one step after its
/// send starts (so every arrow points forward in time). Ops of a wait-for
/// cycle are marked stuck. Precondition: `plan` is well-formed (ir::checkPlan).
Timeline logicalTimeline(const ir::Plan &plan, const compiler::Messages &messages);

/// The simulator's times (`r` from model::simulate with SimOptions::opTimes)
/// in the largest of ns, us, ms, s in which the span is at least 1: an op
/// runs from its start to its end; a send's message leaves when its data
/// enters the link and arrives at the send's end, where its receive's arrow
/// ends; bindings are the simulator's causes; the path is its critical path.
/// Each op's detail says what it waited for and what it moved.
/// `description` goes to the subtitle. Preconditions: `r` has ops for every
/// op of `plan`, simulated on `topo`.
Timeline simulatedTimeline(const ir::Plan &plan, const compiler::Messages &messages,
                           const model::Topology &topo, const model::SimResult &r,
                           std::string description);

} // namespace collc::draw

#endif // COLLC_TOOLS_DRAW_TIMELINE_H
