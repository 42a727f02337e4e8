// What a live change cost the traffic, as the sink saw it: every millisecond the packets delivered and the highest
// latency sampled, kept for the last seconds; for each change, once its window has passed, the delivery it fell short
// of the rate before it (as milliseconds of that rate), the packets full rings dropped and its latency spike, each
// against the time before.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "contract/arg_schema.h"

namespace tandem {

class ChangeWatch {
 public:
  // Before a change: this long is the baseline it is measured against; after its answer, this long is its window.
  static constexpr double kBeforeSeconds = 0.2;
  static constexpr double kAfterSeconds = 0.3;

  explicit ChangeWatch(double tsc_hz) : hz_(tsc_hz), period_(static_cast<uint64_t>(tsc_hz / 1000)) {}

  // Whether a millisecond has passed since the last sample.
  bool due(uint64_t now_tsc) const { return now_tsc >= next_; }
  // The packets delivered and dropped by full rings so far (all chains), those the generator gave up having fallen
  // behind its rates (a stalled control core), and the highest latency sampled since the last sample.
  void sample(uint64_t now_tsc, uint64_t delivered_total, uint64_t ring_drops_total, uint64_t fell_behind_total,
              uint64_t max_latency_cycles);
  // A change requested at `requested_tsc` and answered at `done_tsc`: measured once its window has passed.
  void watch(json id, uint64_t requested_tsc, uint64_t done_tsc);
  // The costs of the changes whose windows have passed: {"event": "change_cost", "id", ...} each.
  std::vector<json> take_costs(uint64_t now_tsc);

 private:
  struct Sample {
    uint64_t tsc, delivered, ring_drops, fell_behind, max_latency;
  };
  struct Watched {
    json id;
    uint64_t requested, done;
  };
  json cost_of(const Watched& change) const;

  double hz_;
  uint64_t period_;
  uint64_t next_ = 0;
  std::deque<Sample> samples_;
  std::vector<Watched> watched_;
};

}  // namespace tandem
