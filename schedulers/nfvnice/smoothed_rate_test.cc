// Tests of the moving average NFVnice uses for arrival rates and costs.
#include "smoothed_rate.h"

#include <gtest/gtest.h>

namespace tandem::nfvnice {
namespace {

TEST(SmoothedRate, FirstIntervalSetsTheValue) {
  SmoothedRate rate(0.01);
  rate.update(0, 0.0);
  EXPECT_FALSE(rate.has_value());
  rate.update(1000, 0.001);
  ASSERT_TRUE(rate.has_value());
  EXPECT_DOUBLE_EQ(rate.value(), 1e6);
}

TEST(SmoothedRate, ForgetsWithItsTimeConstant) {
  SmoothedRate rate(0.01);
  rate.update(0, 0.0);
  rate.update(1000, 0.001);  // 1 Mpps
  uint64_t counter = 1000;
  double t = 0.001;
  // The rate doubles; after one time constant the average has covered 1 - 1/e of the step.
  for (int i = 0; i < 10; i++) {
    counter += 2000;
    t += 0.001;
    rate.update(counter, t);
  }
  EXPECT_NEAR(rate.value(), 1e6 + 1e6 * (1 - std::exp(-1.0)), 1e3);
}

TEST(SmoothedRate, UpdatePeriodDoesNotChangeTheTimeConstant) {
  SmoothedRate fine(0.01), coarse(0.01);
  fine.fold(0, 0.001);
  coarse.fold(0, 0.001);
  for (int i = 0; i < 10; i++) fine.fold(100, 0.001);
  coarse.fold(100, 0.010);
  EXPECT_NEAR(fine.value(), coarse.value(), 1e-9);
}

}  // namespace
}  // namespace tandem::nfvnice
