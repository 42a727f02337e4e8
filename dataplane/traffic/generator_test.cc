// Tests of the generator's pacing arithmetic for stepped rates.
#include "generator.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

TEST(SteppedRate, IntegratesEachStepAndCycles) {
  // 10 cycles a step; 0, 1 and 0.5 packets per cycle.
  std::vector<double> steps = {0.0, 1.0, 0.5};
  EXPECT_EQ(stepped_packets_due(steps, 10, 0), 0u);
  EXPECT_EQ(stepped_packets_due(steps, 10, 10), 0u);  // the silent step
  EXPECT_EQ(stepped_packets_due(steps, 10, 15), 5u);  // half way through the second
  EXPECT_EQ(stepped_packets_due(steps, 10, 20), 10u);
  EXPECT_EQ(stepped_packets_due(steps, 10, 30), 15u);  // one period
  EXPECT_EQ(stepped_packets_due(steps, 10, 45), 20u);  // and again: 15 + 5
  EXPECT_EQ(stepped_packets_due(steps, 10, 3000), 1500u);
}

TEST(SteppedRate, OneStepIsAConstantRate) { EXPECT_EQ(stepped_packets_due({0.25}, 7, 1000), 250u); }

}  // namespace
}  // namespace tandem
