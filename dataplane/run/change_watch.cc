// A live change's cost from the sink's millisecond samples: the delivery deficit against the rate before it, and
// the latency spike.
#include "change_watch.h"

#include <algorithm>

namespace tandem {

namespace {
// 10 s of samples while no change is watched: a change's baseline lies before its request, and an NF that takes new
// arguments only at its next batch may answer seconds later.
constexpr size_t kKeptSamples = 10000;
}  // namespace

void ChangeWatch::sample(uint64_t now_tsc, uint64_t delivered_total, uint64_t ring_drops_total,
                         uint64_t fell_behind_total, uint64_t max_latency_cycles) {
  next_ = now_tsc + period_;
  samples_.push_back({now_tsc, delivered_total, ring_drops_total, fell_behind_total, max_latency_cycles});
  if (samples_.size() > kKeptSamples && watched_.empty()) samples_.pop_front();
}

void ChangeWatch::watch(json id, uint64_t requested_tsc, uint64_t done_tsc) {
  watched_.push_back({std::move(id), requested_tsc, done_tsc});
}

std::vector<json> ChangeWatch::take_costs(uint64_t now_tsc) {
  std::vector<json> costs;
  const auto after = static_cast<uint64_t>(kAfterSeconds * hz_);
  for (auto it = watched_.begin(); it != watched_.end();) {
    if (now_tsc < it->done + after) {
      ++it;
      continue;
    }
    costs.push_back(cost_of(*it));
    it = watched_.erase(it);
  }
  return costs;
}

json ChangeWatch::cost_of(const Watched& change) const {
  const auto before = static_cast<uint64_t>(kBeforeSeconds * hz_), after = static_cast<uint64_t>(kAfterSeconds * hz_);
  // Each sample closes an interval of about a millisecond: what was delivered and dropped in it, and its highest
  // latency. The baseline is the intervals of the 200 ms before the request; the window, those from the request to
  // 300 ms after the change.
  struct Interval {
    double packets, ms;
    uint64_t drops, fell_behind, max_latency;
  };
  std::vector<Interval> baseline, window;
  for (size_t i = 1; i < samples_.size(); i++) {
    const Sample &sample = samples_[i], &previous = samples_[i - 1];
    Interval interval{static_cast<double>(sample.delivered - previous.delivered),
                      static_cast<double>(sample.tsc - previous.tsc) / hz_ * 1e3,
                      sample.ring_drops - previous.ring_drops, sample.fell_behind - previous.fell_behind,
                      sample.max_latency};
    if (sample.tsc + before >= change.requested && sample.tsc < change.requested)
      baseline.push_back(interval);
    else if (sample.tsc >= change.requested && sample.tsc <= change.done + after)
      window.push_back(interval);
  }
  double baseline_packets = 0, baseline_ms = 0, window_ms = 0;
  for (const Interval& interval : baseline) {
    baseline_packets += interval.packets;
    baseline_ms += interval.ms;
  }
  for (const Interval& interval : window) window_ms += interval.ms;
  double rate_per_ms = baseline_ms > 0 ? baseline_packets / baseline_ms : 0;
  // Milliseconds (of the rate before the change) that delivery fell short over some intervals; a surplus after a
  // shortfall (queued packets catching up) does not cancel it.
  auto shortfall_ms = [&](const std::vector<Interval>& intervals) {
    double packets = 0;
    for (const Interval& interval : intervals) packets += std::max(0.0, rate_per_ms * interval.ms - interval.packets);
    return packets / rate_per_ms;
  };
  auto total_of = [](const std::vector<Interval>& intervals, uint64_t Interval::*count) {
    uint64_t total = 0;
    for (const Interval& interval : intervals) total += interval.*count;
    return total;
  };
  auto latency_max_us = [&](const std::vector<Interval>& intervals) {
    uint64_t highest = 0;
    for (const Interval& interval : intervals) highest = std::max(highest, interval.max_latency);
    return static_cast<double>(highest) / hz_ * 1e6;
  };
  json cost = {{"event", "change_cost"},
               {"id", change.id},
               {"window_ms", window_ms},
               {"rate_before_mpps", rate_per_ms / 1e3},
               {"ring_drops_before", total_of(baseline, &Interval::drops)},
               {"ring_drops_in_window", total_of(window, &Interval::drops)},
               // A change that stalled the control core for more than the generator makes up: what was due then was
               // never generated, so it is in no drop count, but the change cost it.
               {"generator_fell_behind_before", total_of(baseline, &Interval::fell_behind)},
               {"generator_fell_behind_in_window", total_of(window, &Interval::fell_behind)},
               {"latency_max_before_us", latency_max_us(baseline)},
               {"latency_max_during_us", latency_max_us(window)}};
  // No traffic before the change: unmeasured. The baseline's own shortfall, scaled to the window's length, is what
  // the samples' unevenness (the sink takes bursts) gives with no change at all: the floor to read a change against.
  cost["deficit_ms"] = rate_per_ms > 0 ? json(shortfall_ms(window)) : json();
  cost["deficit_noise_ms"] = rate_per_ms > 0 ? json(shortfall_ms(baseline) * window_ms / baseline_ms) : json();
  return cost;
}

}  // namespace tandem
