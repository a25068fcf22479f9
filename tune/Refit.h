// tune/Refit.h: the topology's costs refitted to what `collc tune --measure`
// timed (docs/tune.md, "Refitting the topology").
//
// The measured plans are simulated again with each level's α and β and the
// tuned datatype's γ scaled by factors, and the factors are searched (a
// coordinate pattern search in log space from 1, then Levenberg-Marquardt)
// to minimize the mean squared log error ln(predicted / measured) over
// every measured plan and size. Only costs the measured plans exercise are fitted: a cost that is
// zero in the topology, or whose change does not move any prediction (a
// level no timed plan crosses; γ of a collective that does not reduce),
// keeps its value. Native MPI's times are not used: the model has no plan
// for them.
#ifndef COLLC_TUNE_REFIT_H
#define COLLC_TUNE_REFIT_H

#include "model/Topology.h"
#include "tune/Tuner.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace collc::tune {

/// One cost of the topology, before and after.
struct RefitCost {
  std::string name;    ///< "node latency", "network bandwidth", "reduce (double)"
  double before = 0;   ///< seconds (latency) or seconds per byte
  double after = 0;
  /// Why it kept its value; empty when it was fitted.
  std::string kept;
};

struct Refit {
  model::Topology topology; ///< the input's, with the fitted costs
  std::vector<RefitCost> costs; ///< per level latency and bandwidth, then γ
  size_t samples = 0;       ///< (plan, size) measurements fitted to
  /// Root mean square of ln(predicted / measured) over the samples.
  double errorBefore = 0, errorAfter = 0;
};

/// Refits `topo` (the topology `r` was tuned on) to r.measured. Errors when
/// nothing was measured (no size, or every timed plan failed).
llvm::Expected<Refit> refit(const model::Topology &topo, const TuneResult &r);

/// The refit as a Markdown section for the report.
std::string refitReport(const Refit &f);

} // namespace collc::tune

#endif // COLLC_TUNE_REFIT_H
