// Bubble's resource allocation through batch sizes: bounds, priority bias, and Algorithm 1's runtime rule
// (add fast when an NF's arrival rate rises, decrease slowly when it falls).
#pragma once

#include <cstdint>

namespace tandem::bubble {

inline constexpr uint32_t kBatchQuantum = 16;  // batch sizes are multiples of 16 (the paper's choice)

struct BatchRule {
  uint32_t lower = 16;
  uint32_t upper = 1024;
  double alpha = 2.0;     // multiply by this when the rate rose by at least epsilon
  double beta = 16;       // subtract this when it fell by at least epsilon
  double epsilon = 0.10;  // relative change of the arrival rate that counts as a change
};

// `packets` rounded to the nearest multiple of 16 inside [rule.lower, rule.upper].
uint32_t round_batch(double packets, const BatchRule& rule);

// Algorithm 1, lines 7-12, for one NF and one period. The paper compares the absolute change of the rate
// with epsilon; a relative change keeps one epsilon right for NFs whose rates differ by orders of magnitude.
uint32_t adapt_batch(uint32_t batch, double previous_rate_pps, double rate_pps, const BatchRule& rule);

// The batch an NF runs with: its rate-driven base scaled by its priority weight relative to the heaviest
// weight on its core, so that under overload (every input full, every NF taking its whole batch) the NFs'
// throughputs follow their weights.
uint32_t weighted_batch(uint32_t base, double weight, double max_weight_on_core, const BatchRule& rule);

// Initial base batch: the upper bound for the NF with the highest offered rate on its core, the others in
// proportion to their rates (an NF offered less needs fewer packets per turn to keep up).
uint32_t initial_batch(double rate_pps, double max_rate_on_core, const BatchRule& rule);

}  // namespace tandem::bubble
