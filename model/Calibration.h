// model/Calibration.h: fitting α and β (or γ) to measured times
// (docs/topology.md, "Calibration").
//
// `collc calibrate` measures ping-pong times between rank pairs at each
// level and times the reduce kernels; this file turns those samples into
// model parameters. MPI-free, so tests can feed it synthetic measurements.
#ifndef COLLC_MODEL_CALIBRATION_H
#define COLLC_MODEL_CALIBRATION_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace collc::model {

/// One measurement: moving (or combining) `bytes` bytes took `seconds`.
struct Sample {
  double bytes = 0;
  double seconds = 0;
};

/// t = alpha + beta · bytes, fitted.
struct LinearFit {
  double alpha = 0; ///< seconds, >= 0
  double beta = 0;  ///< seconds per byte, >= 0
  /// Coefficient of determination of the weighted fit (1: exact; on the
  /// relative residuals, see fitLatencyBandwidth).
  double r2 = 0;
  /// The largest |predicted / measured - 1| over the samples.
  double maxRelativeError = 0;
};

/// Least squares of t = α + β·b weighted by 1/t² — it minimizes the relative
/// error, so the 0-byte latency and the 64 MiB bandwidth both count — with α
/// and β clamped to >= 0 (a negative one is set to 0 and the other refitted).
/// Precondition: at least two samples with distinct sizes, all times > 0.
LinearFit fitLatencyBandwidth(llvm::ArrayRef<Sample> samples);

} // namespace collc::model

#endif // COLLC_MODEL_CALIBRATION_H
