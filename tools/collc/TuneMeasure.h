// tools/collc/TuneMeasure.h: `collc tune --measure` — the model's best
// candidates and native MPI timed by the runtime, on the machine being tuned
// (docs/tune.md, "Measuring").
//
// Every rank of MPI_COMM_WORLD takes part. Rank 0 has run the model's search;
// it sends the plans to time to the other ranks, and they all time them per
// size: each plan and native MPI in turn, in rounds (the order rotating from
// round to round), each turn a barrier and enough calls to take a few
// milliseconds, its time the slowest rank's per call; a plan's time at a size
// is the median over the rounds. The search's result on rank 0 then gets
// the measurements (tune::applyMeasurements).
#ifndef COLLC_TOOLS_TUNEMEASURE_H
#define COLLC_TOOLS_TUNEMEASURE_H

#include "tune/Tuner.h"

#include <mpi.h>

#include <cstdint>

namespace collc::tool {

struct MeasureOptions {
  uint32_t top = 3;    ///< plans timed per size, beside native MPI
  uint32_t rounds = 7; ///< interleaved rounds; the median is taken
  /// Seconds the measurement may take (rank 0's clock); sizes not reached
  /// keep the model's choice. Infinity: no limit.
  double budget = 0;
  llvm::raw_ostream *progress = nullptr; ///< rank 0's progress lines
};

/// Times on `comm` what rank 0's `result` (null on the other ranks) asks
/// for, for the shape of `opts` (every rank's the same). On rank 0, returns
/// one Measurement per size; an empty vector elsewhere.
std::vector<tune::Measurement> measure(const tune::TuneResult *result,
                                       const tune::TuneOptions &opts,
                                       const MeasureOptions &mo, MPI_Comm comm);

} // namespace collc::tool

#endif // COLLC_TOOLS_TUNEMEASURE_H
