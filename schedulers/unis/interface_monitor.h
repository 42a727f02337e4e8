// The UNiS interface monitor: samples the occupancy of every ring between NFs at the scheduling interval.
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
  const std::vector<uint32_t>& occupancy() const { return occupancy_; }
  uint32_t capacity(int ring) const { return capacity_[ring]; }
  uint64_t samples() const { return samples_; }

 private:
  const std::vector<rte_ring*>& rings_;
  std::vector<uint32_t> occupancy_;
  std::vector<uint32_t> capacity_;
  uint64_t interval_cycles_;
  TscTimer timer_;
  uint64_t samples_ = 0;
};

}  // namespace tandem::unis
