// The load-balanced egress port (μNF's scaling): packets spread over the instances of the next stage.
#pragma once

#include <memory>
#include <vector>

#include "contract/batch.h"
#include "port.h"

namespace tandem {

enum class Balance {
  RoundRobin,  // packet by packet in turn (the paper's): even load, but one flow's packets may be reordered
  FlowHash,    // by a hash of the IPv4 5-tuple: a flow stays on one instance, so its state and order stay right
};

class LoadBalancedEgress final : public EgressPort {
 public:
  LoadBalancedEgress(std::vector<std::unique_ptr<EgressPort>> instances, Balance balance);

  uint16_t tx_burst(rte_mbuf** pkts, uint16_t count, const uint8_t* gates) override;
  // The least room of any instance: the next packet may go to any of them.
  unsigned room() const override;

  // The instance `m` goes to under FlowHash (a frame that is not IPv4 goes to instance 0).
  size_t flow_instance(rte_mbuf* m) const;

 private:
  std::vector<std::unique_ptr<EgressPort>> instances_;
  Balance balance_;
  size_t next_ = 0;  // RoundRobin: the instance of the next packet
  std::vector<std::vector<rte_mbuf*>> sorted_;  // per instance, a burst's packets for it
  std::vector<uint16_t> per_instance_;          // per instance, how many of them
};

}  // namespace tandem
