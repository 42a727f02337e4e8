// The load-balanced egress port's burst function: each packet's instance chosen, each instance's packets handed on at once.
#include "load_balanced_egress.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "contract/five_tuple.h"

namespace tandem {

LoadBalancedEgress::LoadBalancedEgress(std::vector<std::unique_ptr<EgressPort>> instances, Balance balance)
    : instances_(std::move(instances)), balance_(balance), sorted_(instances_.size(), std::vector<rte_mbuf*>(kMaxBurst)),
      per_instance_(instances_.size(), 0) {
  if (instances_.empty()) throw std::invalid_argument("a load-balanced egress needs at least one instance");
}

size_t LoadBalancedEgress::flow_instance(rte_mbuf* m) const {
  return flow_hash(m) % instances_.size();
}

uint16_t LoadBalancedEgress::tx_burst(rte_mbuf** pkts, uint16_t count, const uint8_t* /*gates: one way on*/) {
  std::vector<uint16_t>& per_instance = per_instance_;
  std::fill(per_instance.begin(), per_instance.end(), 0);
  for (uint16_t i = 0; i < count; i++) {
    size_t instance;
    if (balance_ == Balance::RoundRobin) {
      instance = next_;
      next_ = next_ + 1 == instances_.size() ? 0 : next_ + 1;
    } else {
      instance = flow_instance(pkts[i]);
    }
    sorted_[instance][per_instance[instance]++] = pkts[i];
  }
  uint16_t accepted = 0;
  for (size_t instance = 0; instance < instances_.size(); instance++)
    if (per_instance[instance] > 0) accepted += instances_[instance]->tx_burst(sorted_[instance].data(), per_instance[instance], nullptr);
  return accepted;
}

unsigned LoadBalancedEgress::room() const {
  unsigned least = std::numeric_limits<unsigned>::max();
  for (const auto& instance : instances_) least = std::min(least, instance->room());
  return least;
}

}  // namespace tandem
