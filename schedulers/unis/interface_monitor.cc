// Ring occupancy sampling for UNiS, on a TSC deadline.
#include "interface_monitor.h"

namespace tandem::unis {

InterfaceMonitor::InterfaceMonitor(const std::vector<rte_ring*>& rings, uint64_t interval_cycles)
    : rings_(rings), occupancy_(rings.size(), 0), interval_cycles_(interval_cycles) {
  for (rte_ring* ring : rings) capacity_.push_back(rte_ring_get_capacity(ring));
}

bool InterfaceMonitor::poll(uint64_t now_tsc) {
  if (!timer_.expired(now_tsc)) return false;
  timer_.reset(now_tsc, interval_cycles_);
  sample();
  return true;
}

void InterfaceMonitor::sample() {
  for (size_t r = 0; r < rings_.size(); r++) sample(static_cast<int>(r));
  samples_++;
}

}  // namespace tandem::unis
