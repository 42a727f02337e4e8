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
                         uint64_t max_latency_cycles) {
  next_ = now_tsc + period_;
  samples_.push_back({now_tsc, delivered_total, ring_drops_total, max_latency_cycles});
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
  // Per millisecond sample: packets delivered since the sample before it.
  double baseline_packets = 0, baseline_ms = 0;
  uint64_t latency_before = 0, latency_during = 0, drops_before = 0, drops_during = 0;
  double deficit_packets = 0, window_ms = 0;
  for (size_t i = 1; i < samples_.size(); i++) {
    const Sample& sample = samples_[i];
    double packets = static_cast<double>(sample.delivered - samples_[i - 1].delivered);
    double ms = static_cast<double>(sample.tsc - samples_[i - 1].tsc) / hz_ * 1e3;
    if (sample.tsc + before >= change.requested && sample.tsc < change.requested) {
      baseline_packets += packets;
      baseline_ms += ms;
      latency_before = std::max(latency_before, sample.max_latency);
      drops_before += sample.ring_drops - samples_[i - 1].ring_drops;
    } else if (sample.tsc >= change.requested && sample.tsc <= change.done + after) {
      window_ms += ms;
      latency_during = std::max(latency_during, sample.max_latency);
      drops_during += sample.ring_drops - samples_[i - 1].ring_drops;
    }
  }
  double rate_per_ms = baseline_ms > 0 ? baseline_packets / baseline_ms : 0;
  // The same shortfall over the baseline itself, scaled to the window's length: what the millisecond samples' own
  // unevenness (the sink takes bursts) gives with no change at all, the floor to read a change's figure against.
  double noise_packets = 0;
  // Milliseconds (of the rate before the change) that the delivery fell short in its window; a surplus after a
  // shortfall (queued packets catching up) does not cancel it.
  for (size_t i = 1; i < samples_.size() && rate_per_ms > 0; i++) {
    const Sample& sample = samples_[i];
    double packets = static_cast<double>(sample.delivered - samples_[i - 1].delivered);
    double ms = static_cast<double>(sample.tsc - samples_[i - 1].tsc) / hz_ * 1e3;
    if (sample.tsc + before >= change.requested && sample.tsc < change.requested)
      noise_packets += std::max(0.0, rate_per_ms * ms - packets);
    if (sample.tsc >= change.requested && sample.tsc <= change.done + after)
      deficit_packets += std::max(0.0, rate_per_ms * ms - packets);
  }
  auto us = [&](uint64_t cycles) { return static_cast<double>(cycles) / hz_ * 1e6; };
  json cost = {{"event", "change_cost"},
               {"id", change.id},
               {"window_ms", window_ms},
               {"rate_before_mpps", rate_per_ms / 1e3},
               {"ring_drops_before", drops_before},
               {"ring_drops_in_window", drops_during},
               {"latency_max_before_us", us(latency_before)},
               {"latency_max_during_us", us(latency_during)}};
  cost["deficit_ms"] = rate_per_ms > 0 ? json(deficit_packets / rate_per_ms) : json();  // no traffic: unmeasured
  cost["deficit_noise_ms"] =
      rate_per_ms > 0 && baseline_ms > 0 ? json(noise_packets / rate_per_ms * window_ms / baseline_ms) : json();
  return cost;
}

}  // namespace tandem
