// Tests of latency percentiles (nearest rank) and their conversion to microseconds.
#include "latency.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

TEST(Latency, NearestRankPercentiles) {
  LatencySamples samples;
  for (uint64_t v = 100; v >= 1; v--) samples.add(v);  // 1..100, added in reverse
  EXPECT_EQ(samples.percentile(5), 5u);
  EXPECT_EQ(samples.percentile(50), 50u);
  EXPECT_EQ(samples.percentile(95), 95u);
  EXPECT_EQ(samples.percentile(99), 99u);
  EXPECT_EQ(samples.percentile(100), 100u);
  EXPECT_EQ(samples.percentile(0), 1u);
}

TEST(Latency, SmallSetsAndAddsAfterSorting) {
  LatencySamples samples;
  samples.add(30);
  EXPECT_EQ(samples.percentile(99), 30u);
  samples.add(10);  // must re-sort
  EXPECT_EQ(samples.percentile(50), 10u);
  EXPECT_EQ(samples.percentile(100), 30u);
}

TEST(Latency, SummaryInMicrosecondsAndBoundedStorage) {
  LatencySamples samples(10);
  for (int i = 0; i < 20; i++) samples.add(2000);  // 2000 cycles at 1 GHz = 2 us
  EXPECT_EQ(samples.stored(), 10u);
  EXPECT_EQ(samples.seen(), 20u);
  json summary = samples.summary_us(1e9);
  EXPECT_DOUBLE_EQ(summary["p50"].get<double>(), 2.0);
  EXPECT_EQ(summary["samples"], 10);
  EXPECT_EQ(LatencySamples().summary_us(1e9)["samples"], 0);
}

TEST(Latency, QuartilesBoundTheMiddleHalf) {
  LatencySamples samples(1000);
  for (int i = 1; i <= 100; i++) samples.add(static_cast<uint64_t>(i) * 1000);  // 1..100 us at 1 GHz
  json summary = samples.summary_us(1e9);
  EXPECT_NEAR(summary["p25"].get<double>(), 25.0, 1.0);
  EXPECT_NEAR(summary["p75"].get<double>(), 75.0, 1.0);
  EXPECT_LT(summary["p25"].get<double>(), summary["p50"].get<double>());
}

TEST(Latency, TheMeanIsOfTheStoredSamples) {
  LatencySamples samples;
  for (uint64_t cycles : {1000, 2000, 6000}) samples.add(cycles);
  EXPECT_DOUBLE_EQ(samples.summary_us(1e9)["mean"].get<double>(), 3.0);
}

}  // namespace
}  // namespace tandem
