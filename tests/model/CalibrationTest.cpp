// tests/model/CalibrationTest.cpp: the α-β fit recovers known parameters
// from synthetic measurements with noise.
#include "model/Calibration.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

using namespace collc::model;

namespace {

std::vector<Sample> synthetic(double alpha, double beta, double noise, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(1 - noise, 1 + noise);
  std::vector<Sample> s;
  s.push_back({0, alpha * jitter(rng)});
  for (double b = 1; b <= 64.0 * 1024 * 1024; b *= 4)
    s.push_back({b, (alpha + beta * b) * jitter(rng)});
  return s;
}

TEST(Calibration, RecoversExactParameters) {
  LinearFit f = fitLatencyBandwidth(synthetic(1.5e-6, 1 / 12.5e9, 0, 1));
  EXPECT_NEAR(f.alpha, 1.5e-6, 1.5e-6 * 1e-9);
  EXPECT_NEAR(f.beta, 1 / 12.5e9, 1e-9 / 12.5e9);
  EXPECT_NEAR(f.r2, 1, 1e-12);
  EXPECT_LT(f.maxRelativeError, 1e-9);
}

TEST(Calibration, RecoversParametersFromNoisyMeasurements) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    for (auto [alpha, beta] : {std::pair{0.4e-6, 1 / 8e9}, std::pair{2e-6, 1 / 1e9},
                               std::pair{50e-6, 1 / 20e9}}) {
      LinearFit f = fitLatencyBandwidth(synthetic(alpha, beta, 0.03, seed));
      EXPECT_NEAR(f.alpha, alpha, alpha * 0.05) << "seed " << seed;
      EXPECT_NEAR(f.beta, beta, beta * 0.05) << "seed " << seed;
      EXPECT_GT(f.r2, 0.99) << "seed " << seed;
      EXPECT_LT(f.maxRelativeError, 0.07) << "seed " << seed;
    }
  }
}

TEST(Calibration, ClampsANegativeLatencyToZero) {
  // Times that fall below the line at small sizes would give α < 0.
  std::vector<Sample> s = {{1000, 0.5e-6}, {2000, 2e-6}, {4000, 4e-6}};
  LinearFit f = fitLatencyBandwidth(s);
  EXPECT_EQ(f.alpha, 0);
  EXPECT_GT(f.beta, 0);
}

TEST(Calibration, ClampsANegativeSlopeToZero) {
  std::vector<Sample> s = {{0, 3e-6}, {1000, 2e-6}, {2000, 1e-6}};
  LinearFit f = fitLatencyBandwidth(s);
  EXPECT_EQ(f.beta, 0);
  EXPECT_GT(f.alpha, 0);
}

} // namespace
