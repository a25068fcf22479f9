// model/Calibration.cpp: the weighted least-squares fit of α and β.
#include "model/Calibration.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace collc::model {

namespace {
/// Weighted sums of the normal equations of t = α + β·b with weights 1/t².
struct Sums {
  double w = 0, wb = 0, wbb = 0, wt = 0, wbt = 0;
  explicit Sums(llvm::ArrayRef<Sample> s) {
    for (const Sample &x : s) {
      const double k = 1.0 / (x.seconds * x.seconds);
      w += k;
      wb += k * x.bytes;
      wbb += k * x.bytes * x.bytes;
      wt += k * x.seconds;
      wbt += k * x.bytes * x.seconds;
    }
  }
};
} // namespace

LinearFit fitLatencyBandwidth(llvm::ArrayRef<Sample> samples) {
  assert(samples.size() >= 2 && "a line needs two points");
  const Sums s(samples);
  LinearFit f;
  const double det = s.w * s.wbb - s.wb * s.wb;
  if (det > 0) {
    f.alpha = (s.wt * s.wbb - s.wb * s.wbt) / det;
    f.beta = (s.w * s.wbt - s.wb * s.wt) / det;
  }
  if (det <= 0 || f.beta < 0) { // a constant: all latency
    f.beta = 0;
    f.alpha = s.wt / s.w;
  }
  if (f.alpha < 0) { // through the origin: all bandwidth
    f.alpha = 0;
    f.beta = s.wbt / s.wbb;
  }
  // R² of the weighted fit: 1 - Σw(t - t̂)² / Σw(t - t̄_w)².
  const double mean = s.wt / s.w;
  double res = 0, tot = 0;
  for (const Sample &x : samples) {
    const double k = 1.0 / (x.seconds * x.seconds);
    const double pred = f.alpha + f.beta * x.bytes;
    res += k * (x.seconds - pred) * (x.seconds - pred);
    tot += k * (x.seconds - mean) * (x.seconds - mean);
    f.maxRelativeError = std::max(f.maxRelativeError, std::fabs(pred / x.seconds - 1));
  }
  f.r2 = tot > 0 ? 1 - res / tot : 1;
  return f;
}

} // namespace collc::model
