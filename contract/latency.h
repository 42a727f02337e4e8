// Latency samples in TSC cycles and their percentiles (nearest-rank), reported in microseconds.
#pragma once

#include <cstdint>
#include <vector>

#include "arg_schema.h"

namespace tandem {

class LatencySamples {
 public:
  explicit LatencySamples(size_t capacity = 1 << 20) : capacity_(capacity) { samples_.reserve(capacity); }
  // Keeps the first `capacity` samples; later ones are counted but not stored (the window is bounded).
  void add(uint64_t cycles) {
    seen_++;
    if (samples_.size() < capacity_) {
      samples_.push_back(cycles);
      sorted_ = false;
    }
  }
  size_t stored() const { return samples_.size(); }
  bool full() const { return samples_.size() >= capacity_; }
  uint64_t seen() const { return seen_; }
  // Nearest-rank percentile (p in [0, 100]) of the stored samples; 0 when there are none.
  uint64_t percentile(double p);
  // {samples, seen, mean, p5, p50, p95, p99, max} in microseconds (of the stored samples; `seen` counts those not
  // stored too), or {samples: 0, seen} when nothing was stored.
  json summary_us(double tsc_hz);

 private:
  size_t capacity_;
  uint64_t seen_ = 0;
  bool sorted_ = false;
  std::vector<uint64_t> samples_;
};

}  // namespace tandem
