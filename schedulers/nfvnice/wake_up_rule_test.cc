// Tests of NFVnice's wake-up rule: a threshold of waiting packets, or a bound on how long the first one waits.
#include "wake_up_rule.h"

#include <gtest/gtest.h>

namespace tandem::nfvnice {
namespace {

TEST(WakeUpRule, OnePacketWakesAtTheDefaultThreshold) {
  PendingInput input;
  EXPECT_FALSE(input.wake_now({}, 0, 100));
  EXPECT_TRUE(input.wake_now({}, 1, 101));
}

TEST(WakeUpRule, FewerThanTheThresholdWaitUntilTheBound) {
  WakeUpRule rule{.threshold = 32, .wait_cycles = 1000};
  PendingInput input;
  EXPECT_FALSE(input.wake_now(rule, 5, 10'000));
  EXPECT_FALSE(input.wake_now(rule, 31, 10'999)) << "neither 32 packets nor 1000 cycles yet";
  EXPECT_TRUE(input.wake_now(rule, 31, 11'000)) << "the first packet has waited the bound";
}

TEST(WakeUpRule, TheThresholdWakesAtOnce) {
  WakeUpRule rule{.threshold = 32, .wait_cycles = 1000};
  PendingInput input;
  EXPECT_FALSE(input.wake_now(rule, 1, 10'000));
  EXPECT_TRUE(input.wake_now(rule, 32, 10'001));
}

TEST(WakeUpRule, TheWaitCountsFromTheFirstPacketOfEachSleep) {
  WakeUpRule rule{.threshold = 32, .wait_cycles = 1000};
  PendingInput input;
  EXPECT_FALSE(input.wake_now(rule, 1, 10'000));
  input.forget();  // woken (or throttled) meanwhile
  EXPECT_FALSE(input.wake_now(rule, 1, 10'500)) << "a new sleep: its wait starts now, not at 10,000";
  EXPECT_FALSE(input.wake_now(rule, 0, 11'200)) << "emptied (taken by a restart, or a timeout's own look)";
  EXPECT_FALSE(input.wake_now(rule, 2, 11'300));
  EXPECT_TRUE(input.wake_now(rule, 2, 12'300));
}

}  // namespace
}  // namespace tandem::nfvnice
