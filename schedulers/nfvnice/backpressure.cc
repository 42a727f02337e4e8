// Watermark hysteresis per ring and the chain/NF throttle states derived from it.
#include "backpressure.h"

#include <algorithm>
#include <cmath>

namespace tandem::nfvnice {

uint32_t watermark(uint32_t capacity, double fraction, bool round_up) {
  double packets = fraction * capacity;
  return static_cast<uint32_t>(round_up ? std::ceil(packets) : std::floor(packets));
}

Backpressure::Backpressure(const Deployment& deployment, double high, double low)
    : deployment_(deployment),
      rings_(deployment.rings.size()),
      congested_(deployment.rings.size(), false),
      entry_closed_(deployment.chains.size(), false),
      nf_throttled_(deployment.nfs.size(), false) {
  for (const ChainConfig& chain : deployment.chains)
    for (size_t p = 0; p < chain.rings.size(); p++) {
      uint32_t capacity = deployment.rings[chain.rings[p]].capacity;
      rings_[chain.rings[p]] = {std::max(watermark(capacity, high, true), 1u), watermark(capacity, low, false), chain.index, static_cast<int>(p)};
    }
}

bool Backpressure::update(const std::vector<uint32_t>& occupancy) {
  bool ring_changed = false;
  for (size_t r = 0; r < rings_.size(); r++) {
    if (!congested_[r] && occupancy[r] >= rings_[r].high) {
      congested_[r] = true;
      episodes_++;
      ring_changed = true;
    } else if (congested_[r] && occupancy[r] <= rings_[r].low) {
      congested_[r] = false;
      ring_changed = true;
    }
  }
  if (!ring_changed) return false;
  // The furthest congested ring of each chain: everything upstream of it is throttled.
  std::vector<int> furthest(deployment_.chains.size(), -1);
  for (size_t r = 0; r < rings_.size(); r++)
    if (congested_[r]) furthest[rings_[r].chain] = std::max(furthest[rings_[r].chain], rings_[r].position);
  bool changed = false;
  for (const ChainConfig& chain : deployment_.chains) {
    bool closed = furthest[chain.index] >= 0;
    changed = changed || closed != entry_closed_[chain.index];
    entry_closed_[chain.index] = closed;
    for (size_t p = 0; p < chain.nfs.size(); p++) {
      bool throttled = static_cast<int>(p) < furthest[chain.index];
      changed = changed || throttled != nf_throttled_[chain.nfs[p]];
      nf_throttled_[chain.nfs[p]] = throttled;
    }
  }
  return changed;
}

}  // namespace tandem::nfvnice
