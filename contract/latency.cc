// Percentiles of latency samples.
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
  if (samples_.empty()) return {{"samples", 0}};
  auto us = [&](uint64_t cycles) { return static_cast<double>(cycles) * 1e6 / tsc_hz; };
  return {{"samples", samples_.size()}, {"p5", us(percentile(5))},   {"p50", us(percentile(50))},
          {"p95", us(percentile(95))},  {"p99", us(percentile(99))}, {"max", us(percentile(100))}};
}

}  // namespace tandem
