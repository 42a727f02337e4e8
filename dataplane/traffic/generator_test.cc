// Tests of the generator's pacing arithmetic: stepped rates, and how far behind its rate it makes up.
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

TEST(Pacing, SendsWhatIsDueABurstAtATime) {
  EXPECT_EQ(pacing_step(100, 100, 0, 1000, 32).send, 0u);  // on time: nothing
  EXPECT_EQ(pacing_step(100, 90, 0, 1000, 32).send, 10u);
  PacingStep behind = pacing_step(600, 100, 0, 1000, 32);  // a brief stall: made up, a burst per poll
  EXPECT_EQ(behind.send, 32u);
  EXPECT_EQ(behind.give_up, 0u);
  EXPECT_EQ(pacing_step(50, 100, 0, 1000, 32).send, 0u);  // ahead (probes counted): waits for the rate
}

TEST(Pacing, GivesUpWhatIsBeyondTheLagItMakesUp) {
  // 5000 due, 1000 sent, 1000 made up at most: 3000 given up, and the rest sent a burst at a time.
  PacingStep step = pacing_step(5000, 1000, 0, 1000, 32);
  EXPECT_EQ(step.give_up, 3000u);
  EXPECT_EQ(step.send, 32u);
  // Once given up, they are not due again: 5100 due later, 3000 given up, 1032 sent: 1068 behind, 68 more given up.
  step = pacing_step(5100, 1032, 3000, 1000, 32);
  EXPECT_EQ(step.give_up, 68u);
  EXPECT_EQ(step.send, 32u);
  // A generator that keeps pace again gives nothing more up.
  EXPECT_EQ(pacing_step(6000, 2930, 3068, 1000, 32).give_up, 0u);
  EXPECT_EQ(pacing_step(6000, 2932, 3068, 1000, 32).send, 0u);
}

}  // namespace
}  // namespace tandem
