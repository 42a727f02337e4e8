// The labelled egress port's burst function: packets sorted by gate, each gate's handed to its edge at once.
#include "labelled_egress.h"

#include <algorithm>
#include <limits>

#include "contract/packet_meta.h"
#include "free_counted.h"

namespace tandem {

LabelledEgress::LabelledEgress(std::vector<std::unique_ptr<EgressPort>> by_gate, uint64_t& label_miss,
                               uint64_t& journal)
    : by_gate_(std::move(by_gate)),
      sorted_(by_gate_.size(), std::vector<rte_mbuf*>(kMaxBurst)),
      missed_(kMaxBurst),
      label_miss_(label_miss),
      journal_(journal) {}

uint16_t LabelledEgress::tx_burst(rte_mbuf** pkts, uint16_t count, const uint8_t* gates) {
  uint16_t per_gate[std::numeric_limits<uint8_t>::max() + 1] = {};
  uint16_t missed = 0;
  for (uint16_t i = 0; i < count; i++) {
    uint8_t gate = gates == nullptr ? 0 : gates[i];
    record_gate(pkts[i], gate);  // for the sink's check that the packet went where its label says
    if (gate < by_gate_.size() && by_gate_[gate])
      sorted_[gate][per_gate[gate]++] = pkts[i];
    else
      missed_[missed++] = pkts[i];
  }
  uint16_t accepted = 0;
  for (size_t gate = 0; gate < by_gate_.size(); gate++)
    if (per_gate[gate] > 0) accepted += by_gate_[gate]->tx_burst(sorted_[gate].data(), per_gate[gate], nullptr);
  // The graph has no edge for what the NF decided: the packet ends here, counted as this node's label miss.
  if (missed > 0) free_counted(missed_.data(), missed, label_miss_, journal_);
  return accepted;
}

unsigned LabelledEgress::room() const {
  unsigned least = std::numeric_limits<unsigned>::max();
  for (const auto& edge : by_gate_)
    if (edge) least = std::min(least, edge->room());
  return least == std::numeric_limits<unsigned>::max() ? 0 : least;
}

void LabelledEgress::flush() {
  for (auto& port : by_gate_)
    if (port) port->flush();
}

void LabelledEgress::drop_held() {
  for (auto& port : by_gate_)
    if (port) port->drop_held();
}

}  // namespace tandem
