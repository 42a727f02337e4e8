// Tests of Bubble's batch-size rules: rounding and bounds, add fast / decrease slowly, priority bias.
#include "batch_size.h"

#include <gtest/gtest.h>

namespace tandem::bubble {
namespace {

const BatchRule rule{.lower = 16, .upper = 1024, .alpha = 2.0, .beta = 16, .epsilon = 0.1};

TEST(RoundBatch, MultiplesOf16InsideTheBounds) {
  EXPECT_EQ(round_batch(100, rule), 96u);
  EXPECT_EQ(round_batch(104, rule), 112u);
  EXPECT_EQ(round_batch(3, rule), 16u);
  EXPECT_EQ(round_batch(5000, rule), 1024u);
  EXPECT_EQ(round_batch(-40, rule), 16u);
}

TEST(AdaptBatch, ARiseOfEpsilonMultipliesByAlpha) {
  EXPECT_EQ(adapt_batch(64, 1e6, 1.1e6, rule), 128u);
  EXPECT_EQ(adapt_batch(768, 1e6, 2e6, rule), 1024u);  // capped
}

TEST(AdaptBatch, AFallOfEpsilonSubtractsBeta) {
  EXPECT_EQ(adapt_batch(128, 1e6, 0.5e6, rule), 112u);
  EXPECT_EQ(adapt_batch(16, 1e6, 0.1e6, rule), 16u);  // floored
}

TEST(AdaptBatch, EveryStepMovesAtLeastOneQuantum) {
  BatchRule gentle = rule;
  gentle.alpha = 1.25;
  gentle.beta = 4;
  EXPECT_EQ(adapt_batch(16, 1e6, 2e6, gentle), 32u);        // 20 would round back to 16: the rise would never act
  EXPECT_EQ(adapt_batch(1024, 1e6, 0.5e6, gentle), 1008u);  // 1020 would round back to 1024: nor would the fall
  gentle.alpha = 1.1;
  EXPECT_EQ(adapt_batch(160, 1e6, 2e6, gentle), 176u);  // an exact multiple stays exact (no rounding past it)
}

TEST(AdaptBatch, ChangesBelowEpsilonKeepTheBatch) {
  EXPECT_EQ(adapt_batch(128, 1e6, 1.05e6, rule), 128u);
  EXPECT_EQ(adapt_batch(128, 1e6, 0.95e6, rule), 128u);
}

TEST(AdaptBatch, TrafficStartingFromNothingIsARise) {
  EXPECT_EQ(adapt_batch(32, 0, 1e5, rule), 64u);
  EXPECT_EQ(adapt_batch(32, 0, 0, rule), 32u);
}

TEST(WeightedBatch, BatchesFollowWeightsOnACore) {
  EXPECT_EQ(weighted_batch(1024, 3, 3, rule), 1024u);
  EXPECT_EQ(weighted_batch(1024, 2, 3, rule), 688u);  // 682.7 -> nearest multiple of 16
  EXPECT_EQ(weighted_batch(1024, 1, 3, rule), 336u);
  EXPECT_EQ(weighted_batch(64, 1, 100, rule), 16u);  // never below the lower bound
}

TEST(InitialBatch, ProportionalToOfferedRate) {
  EXPECT_EQ(initial_batch(2e6, 2e6, rule), 1024u);
  EXPECT_EQ(initial_batch(1e6, 2e6, rule), 512u);
  EXPECT_EQ(initial_batch(0, 0, rule), 1024u);  // as fast as possible: all equal
}

}  // namespace
}  // namespace tandem::bubble
