// The UNiS interface monitor: samples the occupancy of the rings between NFs, every ring at the scheduling
// interval (the paper's way) or single interfaces when the scheduler asks.
#pragma once

#include <cstdint>
#include <vector>

#include <rte_ring.h>

#include "tsc_timer.h"

namespace tandem::unis {

// One side of an NF as UNiS watches it. The paper's NFs sit on a line, one ring in and one out; in a graph a
// join takes from several rings and a fan-out feeds several. Its input is then what waits in all its
// in-rings (the sum), its output its fullest out-ring (the first to refuse packets). A one-ring interface is
// that ring either way.
struct Interface {
  std::vector<int> rings;
  bool fullest = false;  // false: the rings' sum; true: their fullest
};

// Reads only what rte_ring exposes to anyone who maps it (count and capacity): UNiS asks the NFs nothing.
class InterfaceMonitor {
 public:
  InterfaceMonitor(const std::vector<rte_ring*>& rings, std::vector<Interface> interfaces, uint64_t interval_cycles);
  // Samples every ring if the monitoring timer expired; returns whether it did (Algorithm 1, line 4).
  bool poll(uint64_t now_tsc);
  void sample();  // every ring once, then every interface from them
  void sample(int interface);
  const std::vector<uint32_t>& occupancy() const { return occupancy_; }  // per interface
  // Packets the interface can hold: the rings' total for a sum, the smallest ring's for the fullest.
  uint32_t capacity(int interface) const { return capacity_[interface]; }
  uint64_t samples() const { return samples_; }
  // Each read pulls the ring's two counter lines to the control core; the NF that writes them next pays to
  // take them back, a cross-core round trip each (README, UNiS).
  uint64_t ring_reads() const { return ring_reads_; }

 private:
  uint32_t combine(const Interface& interface, const std::vector<uint32_t>& per_ring) const;

  const std::vector<rte_ring*>& rings_;
  std::vector<Interface> interfaces_;
  std::vector<uint32_t> ring_occupancy_;
  std::vector<uint32_t> occupancy_;
  std::vector<uint32_t> capacity_;
  uint64_t interval_cycles_;
  TscTimer timer_;
  uint64_t samples_ = 0, ring_reads_ = 0;
};

}  // namespace tandem::unis
