// Unit tests for the fixed-bucket latency histogram.
#include "latency_histogram.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

constexpr double kHz = 1e9;  // 1000 cycles a microsecond

TEST(LatencyHistogram, CountsAreCumulativeAndBoundsInclusive) {
  LatencyHistogram h(kHz);
  h.add(500);   // 0.5 us: every bucket
  h.add(1000);  // exactly 1 us: the 1 us bucket (Prometheus' le is "less than or equal")
  h.add(1001);  // just above: from 2 us on
  h.add(7000);  // 7 us: from 10 us on
  json j = h.to_json();
  EXPECT_EQ(j["count"], 4u);
  EXPECT_DOUBLE_EQ(j["sum_us"].get<double>(), 9.501);
  EXPECT_EQ(j["bounds_us"][0], 1.0);
  EXPECT_EQ(j["counts"][0], 2u);  // le 1
  EXPECT_EQ(j["counts"][1], 3u);  // le 2
  EXPECT_EQ(j["counts"][2], 3u);  // le 5
  EXPECT_EQ(j["counts"][3], 4u);  // le 10
  EXPECT_EQ(j["counts"].back(), 4u);
}

TEST(LatencyHistogram, SamplesAboveTheLastBoundCountOnlyInTheTotal) {
  LatencyHistogram h(kHz);
  h.add(1'000'000'000);  // 1 s
  json j = h.to_json();
  EXPECT_EQ(j["count"], 1u);
  EXPECT_EQ(j["counts"].back(), 0u);
}

TEST(LatencyHistogram, EmptyHistogramHasZeroCounts) {
  json j = LatencyHistogram(kHz).to_json();
  EXPECT_EQ(j["count"], 0u);
  EXPECT_EQ(j["counts"].size(), LatencyHistogram::kBoundsUs.size());
  EXPECT_EQ(j["sum_us"], 0.0);
}

}  // namespace
}  // namespace tandem
