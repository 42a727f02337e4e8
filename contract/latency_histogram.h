// Latency in fixed buckets, cumulative like a Prometheus histogram: what live metrics report while a run lasts.
#pragma once

#include <array>
#include <cstdint>

#include "arg_schema.h"

namespace tandem {

class LatencyHistogram {
 public:
  // Upper bounds in microseconds, 1-2-5 steps from 1 µs to 100 ms: a chain on a shared core sees 10 µs when its
  // NFs run back to back and tens of milliseconds when one waits behind a throttled neighbour.
  static constexpr std::array<double, 16> kBoundsUs = {1,   2,    5,    10,   20,    50,    100,   200,
                                                       500, 1000, 2000, 5000, 10000, 20000, 50000, 100000};

  explicit LatencyHistogram(double tsc_hz);
  void add(uint64_t cycles);
  // {bounds_us: [...], counts: [cumulative count at or below each bound], count, sum_us}; count includes the
  // samples above the last bound (the +Inf bucket).
  json to_json() const;

 private:
  double cycles_per_us_;
  std::array<uint64_t, kBoundsUs.size()> bound_cycles_{};
  std::array<uint64_t, kBoundsUs.size()> in_bucket_{};  // per bucket, not cumulative: add() touches one
  uint64_t count_ = 0;
  uint64_t sum_cycles_ = 0;
};

}  // namespace tandem
