// The UNiS interface monitor: samples the occupancy of the rings between NFs, every ring at the scheduling
// interval (the paper's way) or single rings when the scheduler asks.
#pragma once

#include <cstdint>
#include <vector>

#include <rte_ring.h>

#include "tsc_timer.h"

namespace tandem::unis {

// Reads only what rte_ring exposes to anyone who maps it (count and capacity): UNiS asks the NFs nothing.
class InterfaceMonitor {
 public:
  InterfaceMonitor(const std::vector<rte_ring*>& rings, uint64_t interval_cycles);
  // Samples every ring if the monitoring timer expired; returns whether it did (Algorithm 1, line 4).
  bool poll(uint64_t now_tsc);
  void sample();
  void sample(int ring) {
    occupancy_[ring] = rte_ring_count(rings_[ring]);
    ring_reads_++;
  }
  const std::vector<uint32_t>& occupancy() const { return occupancy_; }
  uint32_t capacity(int ring) const { return capacity_[ring]; }
  uint64_t samples() const { return samples_; }
  // Each read pulls the ring's two counter lines to the control core; the NF that writes them next pays to
  // take them back, a cross-core round trip each (README, UNiS).
  uint64_t ring_reads() const { return ring_reads_; }

 private:
  const std::vector<rte_ring*>& rings_;
  std::vector<uint32_t> occupancy_;
  std::vector<uint32_t> capacity_;
  uint64_t interval_cycles_;
  TscTimer timer_;
  uint64_t samples_ = 0, ring_reads_ = 0;
};

}  // namespace tandem::unis
