// Opening each chain's entry and exit ports by the chain's I/O.
#include "chain_ends.h"

#include "dataplane/ports/graph_ports.h"
#include "dataplane/ports/ring_port.h"

namespace tandem {

ChainEnds::ChainEnds(const Deployment& deployment, rte_mempool* pool, const std::vector<rte_ring*>& rings, StatsZone& stats) {
  for (const ChainConfig& chain : deployment.chains) {
    if (!chain.io.enabled) {
      entries_.push_back(std::make_unique<RingEgress>(rings[chain.entry_ring], stats.rings[chain.entry_ring], entry_drop_journal_));
      exits_.push_back(open_ingress(chain.exit_rings, rings, stats));
      continue;
    }
    // A kernel chain is a line: one entry link and one exit link, each a veth with an end in the root namespace.
    uint32_t capacity = deployment.rings[chain.entry_ring].capacity;
    std::string name = "net_af_packet_" + std::to_string(chain.index);
    auto& into_chain = af_packet_ports_.emplace_back(
        std::make_unique<AfPacketPort>(name + "_entry", chain.io.generator_interface, pool, capacity));
    entries_.push_back(std::make_unique<EthdevEgress>(into_chain->id(), chain.io.entry_next_hop, stats.rings[chain.entry_ring], entry_drop_journal_));
    auto& from_chain = af_packet_ports_.emplace_back(
        std::make_unique<AfPacketPort>(name + "_exit", chain.io.sink_interface, pool, deployment.rings[chain.exit_rings.at(0)].capacity));
    exits_.push_back(std::make_unique<EthdevIngress>(from_chain->id(), stats.rings[chain.exit_rings.at(0)]));
  }
}

}  // namespace tandem
