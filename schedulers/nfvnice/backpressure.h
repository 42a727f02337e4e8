// NFVnice's chain backpressure: per-ring high/low watermarks with hysteresis decide which chains shed load
// at their entry and which NFs (upstream of a congested ring, or only its producer) are kept from running.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "contract/deployment.h"

namespace tandem::nfvnice {

class Backpressure {
 public:
  // Which NFs a congested ring keeps from running.
  enum class Throttle {
    Upstream,  // every NF whose packets can reach it (the paper)
    Producer,  // only the NF that writes it: the ones before stop in turn as their own output rings fill
  };

  // `high` and `low` are fractions of each ring's capacity, 0 < low < high <= 1.
  Backpressure(const Deployment& deployment, double high, double low, Throttle throttle = Throttle::Upstream);

  // Feeds every ring's occupancy (indexed by ring); returns true if any chain or NF changed state.
  // A ring turns congested when it holds at least high x capacity and stays so until it holds no more
  // than low x capacity.
  bool update(const std::vector<uint32_t>& occupancy);

  bool ring_congested(int ring) const { return congested_[ring]; }
  bool any_ring_congested() const { return congested_count_ > 0; }
  bool entry_closed(int chain) const { return entry_closed_[chain]; }
  // True while a ring the NF's packets can reach (along the edges out of it; with Throttle::Producer, a ring it
  // writes) is congested.
  bool nf_throttled(int nf) const { return nf_throttled_[nf]; }
  // Times a ring crossed its high watermark.
  uint64_t episodes() const { return episodes_; }

 private:
  struct Watermarks {
    uint32_t high, low;
  };
  const Deployment& deployment_;
  std::vector<Watermarks> rings_;
  std::vector<std::vector<int>> upstream_;  // per ring: the NFs it throttles (its producer, and all before it)
  std::vector<bool> congested_, entry_closed_, nf_throttled_;
  size_t congested_count_ = 0;  // kept as `update` flips rings, so a tick every 10 us need not scan them again
  uint64_t episodes_ = 0;
};

// The watermark in packets for a fraction of a ring's capacity: the high one rounds up, the low one down,
// so that high > low for any capacity of at least 2 when high > low as fractions.
uint32_t watermark(uint32_t capacity, double fraction, bool round_up);

}  // namespace tandem::nfvnice
