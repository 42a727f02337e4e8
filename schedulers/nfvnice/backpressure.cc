// Watermark hysteresis per ring and the chain/NF throttle states derived from it.
#include "backpressure.h"

#include <algorithm>
#include <cmath>

namespace tandem::nfvnice {

uint32_t watermark(uint32_t capacity, double fraction, bool round_up) {
  double packets = fraction * capacity;
  return static_cast<uint32_t>(round_up ? std::ceil(packets) : std::floor(packets));
}

Backpressure::Backpressure(const Deployment& deployment, double high, double low, Throttle throttle)
    : deployment_(deployment),
      rings_(deployment.rings.size()),
      upstream_(deployment.rings.size()),
      congested_(deployment.rings.size(), false),
      entry_closed_(deployment.chains.size(), false),
      nf_throttled_(deployment.nfs.size(), false) {
  for (const RingConfig& ring : deployment.rings) {
    rings_[ring.index] = {std::max(watermark(ring.capacity, high, true), 1u), watermark(ring.capacity, low, false)};
    // Walk upstream from the producer: every NF that feeds it, and what feeds those.
    std::vector<bool> seen(deployment.nfs.size(), false);
    std::vector<int> todo;
    if (ring.from >= 0) todo.push_back(ring.from);
    while (!todo.empty()) {
      int nf = todo.back();
      todo.pop_back();
      if (seen[nf]) continue;
      seen[nf] = true;
      upstream_[ring.index].push_back(nf);
      if (throttle == Throttle::Producer) break;
      for (int in : deployment.nfs[nf].in_rings)
        if (deployment.rings[in].from >= 0) todo.push_back(deployment.rings[in].from);
    }
  }
}

bool Backpressure::update(const std::vector<uint32_t>& occupancy) {
  bool ring_changed = false;
  for (size_t r = 0; r < rings_.size(); r++) {
    if (!congested_[r] && occupancy[r] >= rings_[r].high) {
      congested_[r] = true;
      congested_count_++;
      episodes_++;
      ring_changed = true;
    } else if (congested_[r] && occupancy[r] <= rings_[r].low) {
      congested_[r] = false;
      congested_count_--;
      ring_changed = true;
    }
  }
  if (!ring_changed) return false;
  // A chain with a congested ring sheds at its entry; every NF upstream of a congested ring is throttled.
  std::vector<bool> closed(deployment_.chains.size(), false), throttled(deployment_.nfs.size(), false);
  for (size_t r = 0; r < rings_.size(); r++) {
    if (!congested_[r]) continue;
    closed[deployment_.rings[r].chain] = true;
    for (int nf : upstream_[r]) throttled[nf] = true;
  }
  bool changed = closed != entry_closed_ || throttled != nf_throttled_;
  entry_closed_ = closed;
  nf_throttled_ = throttled;
  return changed;
}

}  // namespace tandem::nfvnice
