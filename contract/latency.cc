// Percentiles and the mean of latency samples.
#include "latency.h"

#include <algorithm>
#include <cmath>

namespace tandem {

uint64_t LatencySamples::percentile(double p) {
  if (samples_.empty()) return 0;
  if (!sorted_) {
    std::sort(samples_.begin(), samples_.end());
    sorted_ = true;
  }
  // Nearest rank: the smallest sample with at least p % of the samples at or below it.
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(samples_.size())));
  return samples_[std::clamp<size_t>(rank, 1, samples_.size()) - 1];
}

json LatencySamples::summary_us(double tsc_hz) {
  if (samples_.empty()) return {{"samples", 0}, {"seen", seen_}};
  auto us = [&](double cycles) { return cycles * 1e6 / tsc_hz; };
  double total = 0;
  for (uint64_t cycles : samples_) total += static_cast<double>(cycles);
  return {{"samples", samples_.size()},
          {"seen", seen_},
          {"mean", us(total / static_cast<double>(samples_.size()))},
          {"p5", us(static_cast<double>(percentile(5)))},
          {"p25", us(static_cast<double>(percentile(25)))},
          {"p50", us(static_cast<double>(percentile(50)))},
          {"p75", us(static_cast<double>(percentile(75)))},
          {"p95", us(static_cast<double>(percentile(95)))},
          {"p99", us(static_cast<double>(percentile(99)))},
          {"max", us(static_cast<double>(percentile(100)))}};
}

}  // namespace tandem
