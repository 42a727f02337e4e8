// Ring occupancy sampling for UNiS, on a TSC deadline, combined into the NFs' interfaces.
#include "interface_monitor.h"

#include <algorithm>

namespace tandem::unis {

InterfaceMonitor::InterfaceMonitor(const std::vector<rte_ring*>& rings, std::vector<Interface> interfaces,
                                   uint64_t interval_cycles)
    : rings_(rings),
      interfaces_(std::move(interfaces)),
      ring_occupancy_(rings.size(), 0),
      occupancy_(interfaces_.size(), 0),
      interval_cycles_(interval_cycles) {
  std::vector<uint32_t> ring_capacity;
  for (rte_ring* ring : rings) ring_capacity.push_back(rte_ring_get_capacity(ring));
  for (const Interface& interface : interfaces_) {
    uint32_t total = 0, smallest = UINT32_MAX;
    for (int ring : interface.rings) {
      total += ring_capacity[ring];
      smallest = std::min(smallest, ring_capacity[ring]);
    }
    capacity_.push_back(interface.fullest ? smallest : total);
  }
}

uint32_t InterfaceMonitor::combine(const Interface& interface, const std::vector<uint32_t>& per_ring) const {
  uint32_t total = 0, fullest = 0;
  for (int ring : interface.rings) {
    total += per_ring[ring];
    fullest = std::max(fullest, per_ring[ring]);
  }
  return interface.fullest ? fullest : total;
}

bool InterfaceMonitor::poll(uint64_t now_tsc) {
  if (!timer_.expired(now_tsc)) return false;
  timer_.reset(now_tsc, interval_cycles_);
  sample();
  return true;
}

void InterfaceMonitor::sample() {
  for (size_t r = 0; r < rings_.size(); r++) ring_occupancy_[r] = rte_ring_count(rings_[r]);
  ring_reads_ += rings_.size();
  for (size_t i = 0; i < interfaces_.size(); i++) occupancy_[i] = combine(interfaces_[i], ring_occupancy_);
  samples_++;
}

void InterfaceMonitor::sample(int interface) {
  for (int ring : interfaces_[interface].rings) ring_occupancy_[ring] = rte_ring_count(rings_[ring]);
  ring_reads_ += interfaces_[interface].rings.size();
  occupancy_[interface] = combine(interfaces_[interface], ring_occupancy_);
}

}  // namespace tandem::unis
