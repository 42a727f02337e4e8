// Fixed-bucket latency histogram.
#include "latency_histogram.h"

#include <algorithm>

namespace tandem {

LatencyHistogram::LatencyHistogram(double tsc_hz) : cycles_per_us_(tsc_hz / 1e6) {
  for (size_t b = 0; b < kBoundsUs.size(); b++) bound_cycles_[b] = static_cast<uint64_t>(kBoundsUs[b] * cycles_per_us_);
}

void LatencyHistogram::add(uint64_t cycles) {
  count_++;
  sum_cycles_ += cycles;
  // The first bound at or above the sample; none: only the +Inf bucket (count_) holds it.
  auto bucket = std::lower_bound(bound_cycles_.begin(), bound_cycles_.end(), cycles);
  if (bucket != bound_cycles_.end()) in_bucket_[static_cast<size_t>(bucket - bound_cycles_.begin())]++;
}

json LatencyHistogram::to_json() const {
  json bounds = json::array(), counts = json::array();
  uint64_t cumulative = 0;
  for (size_t b = 0; b < kBoundsUs.size(); b++) {
    cumulative += in_bucket_[b];
    bounds.push_back(kBoundsUs[b]);
    counts.push_back(cumulative);
  }
  return {{"bounds_us", bounds},
          {"counts", counts},
          {"count", count_},
          {"sum_us", static_cast<double>(sum_cycles_) / cycles_per_us_}};
}

}  // namespace tandem
