// Batch-size arithmetic of Bubble's Algorithm 1.
#include "batch_size.h"

#include <algorithm>
#include <cmath>

namespace tandem::bubble {

uint32_t round_batch(double packets, const BatchRule& rule) {
  double quanta = std::round(packets / kBatchQuantum);
  double rounded = std::isfinite(quanta) ? quanta * kBatchQuantum : rule.upper;
  return static_cast<uint32_t>(std::clamp(rounded, static_cast<double>(rule.lower), static_cast<double>(rule.upper)));
}

namespace {

// A step of Algorithm 1 moves the batch by at least one quantum: a rise rounds up and a fall rounds down. Rounding
// to the nearest multiple would swallow small steps (16 x 1.25 = 20 -> 16, 1024 - 4 = 1020 -> 1024), so an
// alpha or beta that is valid on paper would silently never act. The 1e-9 keeps 160 x 1.1 = 176.00000000000003
// at 176.
constexpr double kSlack = 1e-9;
uint32_t grown_batch(uint32_t batch, const BatchRule& rule) {
  return round_batch(std::ceil(batch * rule.alpha / kBatchQuantum - kSlack) * kBatchQuantum, rule);
}
uint32_t shrunk_batch(uint32_t batch, const BatchRule& rule) {
  return round_batch(std::floor((batch - rule.beta) / kBatchQuantum + kSlack) * kBatchQuantum, rule);
}

}  // namespace

uint32_t adapt_batch(uint32_t batch, double previous_rate_pps, double rate_pps, const BatchRule& rule) {
  if (previous_rate_pps <= 0) return rate_pps > 0 ? grown_batch(batch, rule) : batch;
  double change = (rate_pps - previous_rate_pps) / previous_rate_pps;
  if (change >= rule.epsilon) return grown_batch(batch, rule);    // add fast
  if (change <= -rule.epsilon) return shrunk_batch(batch, rule);  // decrease slowly
  return batch;
}

uint32_t weighted_batch(uint32_t base, double weight, double max_weight_on_core, const BatchRule& rule) {
  if (max_weight_on_core <= 0) return round_batch(base, rule);
  return round_batch(base * weight / max_weight_on_core, rule);
}

uint32_t initial_batch(double rate_pps, double max_rate_on_core, const BatchRule& rule) {
  if (max_rate_on_core <= 0) return rule.upper;  // rates unknown (as fast as possible): all equal
  return round_batch(rule.upper * rate_pps / max_rate_on_core, rule);
}

}  // namespace tandem::bubble
