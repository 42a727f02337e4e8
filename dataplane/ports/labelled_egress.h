// The labelled egress port (μNF): each packet leaves along the edge of the gate its NF chose for it.
#pragma once

#include <memory>
#include <vector>

#include "contract/batch.h"
#include "port.h"

namespace tandem {

class LabelledEgress final : public EgressPort {
 public:
  // by_gate[g]: the port of the edge labelled with gate g, or nullptr where the graph has none. A packet whose
  // gate has no edge is a label miss: dropped, counted into `label_miss` and freed under `journal`
  // (free_counted.h).
  LabelledEgress(std::vector<std::unique_ptr<EgressPort>> by_gate, uint64_t& label_miss, uint64_t& journal);

  // Each edge gets its packets in the order they came; gates == nullptr sends everything along gate 0.
  uint16_t tx_burst(rte_mbuf** pkts, uint16_t count, const uint8_t* gates) override;
  // The least room of any edge: the next packet may take any of them.
  unsigned room() const override;
  void flush() override;
  void drop_held() override;

 private:
  std::vector<std::unique_ptr<EgressPort>> by_gate_;
  std::vector<std::vector<rte_mbuf*>> sorted_;  // per gate, a burst's packets for that edge
  std::vector<rte_mbuf*> missed_;
  uint64_t& label_miss_;
  uint64_t& journal_;
};

}  // namespace tandem
