// Opening each chain's entry and exit ports by the chain's I/O.
#include "chain_ends.h"

#include "dataplane/ports/graph_ports.h"
#include "dataplane/ports/ring_port.h"

namespace tandem {

namespace {

// The DPDK device names of a kernel chain's ends: this, then "entry" or "exit" (one pair per chain of the run).
std::string kernel_end_name(const ChainConfig& chain) { return "net_af_packet_" + std::to_string(chain.index) + "_"; }

}  // namespace

ChainEnds::ChainEnds(const Deployment& deployment, rte_mempool* pool, const std::vector<rte_ring*>& rings,
                     StatsZone& stats)
    : pool_(pool) {
  for (const PortConfig& port : deployment.ports) ports_.push_back(std::make_unique<EthdevPort>(port, pool));
  open_receivers(deployment);
  for (const ChainConfig& chain : deployment.chains) open_ends(deployment, chain, rings, stats);
}

std::pair<std::unique_ptr<EgressPort>, std::unique_ptr<IngressPort>> ChainEnds::open_added_chain(
    const Deployment& deployment, const ChainConfig& chain, const std::vector<rte_ring*>& rings, StatsZone& stats) {
  entries_.clear();  // the generator and the sink took the others long ago
  exits_.clear();
  open_ends(deployment, chain, rings, stats);
  return {std::move(entries_.back()), std::move(exits_.back())};
}

void ChainEnds::close_kernel_ends(const ChainConfig& chain) {
  const std::string prefix = kernel_end_name(chain);
  std::erase_if(af_packet_ports_,
                [&](const std::unique_ptr<AfPacketPort>& port) { return port->device_name().rfind(prefix, 0) == 0; });
}

void ChainEnds::open_ends(const Deployment& deployment, const ChainConfig& chain, const std::vector<rte_ring*>& rings,
                          StatsZone& stats) {
  to_port_.push_back(chain.to_port);
  // A kernel link's end in the root namespace: a veth into the first (out of the last) NF, which is kernel-I/O.
  // Only a chain of one line has such an end (a chain with kernel-I/O NFs is a line).
  std::string name = kernel_end_name(chain);
  int entry = chain.entry_ring;
  if (deployment.rings[entry].kernel) {
    auto& into_chain = af_packet_ports_.emplace_back(std::make_unique<AfPacketPort>(
        name + "entry", chain.io.generator_interface, pool_, deployment.rings[entry].capacity));
    entries_.push_back(std::make_unique<EthdevEgress>(into_chain->id(), chain.io.entry_next_hop, stats.rings[entry],
                                                      entry_drop_journal_));
  } else {
    entries_.push_back(std::make_unique<RingEgress>(rings[entry], stats.rings[entry], entry_drop_journal_));
  }
  int exit = chain.exit_rings.at(0);
  if (deployment.rings[exit].kernel) {
    auto& from_chain = af_packet_ports_.emplace_back(
        std::make_unique<AfPacketPort>(name + "exit", chain.io.sink_interface, pool_, deployment.rings[exit].capacity));
    exits_.push_back(std::make_unique<EthdevIngress>(from_chain->id(), stats.rings[exit]));
    any_kernel_exit_ = true;
  } else {
    exits_.push_back(open_ingress(chain.exit_rings, rings, stats));
  }
}

void ChainEnds::open_receivers(const Deployment& deployment) {
  for (const PortConfig& port : deployment.ports) {
    std::vector<PortReceiver::Route> routes;
    EthdevPort* pass_to = nullptr;
    for (const ChainConfig& chain : deployment.chains) {
      if (chain.from_port != port.index) continue;
      routes.push_back(route_of(chain));
      // Unhandled frames cross the wire the way its first chain does.
      if (port.pass_unhandled && pass_to == nullptr && chain.to_port >= 0) pass_to = ports_[chain.to_port].get();
    }
    if (!routes.empty())
      receivers_.push_back(std::make_unique<PortReceiver>(*ports_[port.index], std::move(routes), pass_to));
  }
}

EthdevPort* ChainEnds::port(int index) const {
  return index >= 0 && index < static_cast<int>(ports_.size()) ? ports_[index].get() : nullptr;
}

PortReceiver::Route ChainEnds::route_of(const ChainConfig& chain) const {
  PortReceiver::Route route{chain.index, {}};
  for (const std::string& source : chain.from_sources) route.sources.emplace_back(source);
  return route;
}

std::unique_ptr<PortReceiver> ChainEnds::receiver_for_added(const ChainConfig& chain) const {
  const PortConfig& config = ports_.at(chain.from_port)->config();
  EthdevPort* pass_to = config.pass_unhandled ? port(chain.to_port) : nullptr;
  return std::make_unique<PortReceiver>(*ports_[chain.from_port], std::vector<PortReceiver::Route>{route_of(chain)},
                                        pass_to);
}

std::vector<EthdevPort*> ChainEnds::exit_ports() const {
  std::vector<EthdevPort*> exits;
  for (int port : to_port_) exits.push_back(port >= 0 ? ports_[port].get() : nullptr);
  return exits;
}

void ChainEnds::close_ports() {
  for (auto& port : ports_) port->close();
}

json ChainEnds::port_reports() const {
  json reports = json::array();
  for (const auto& port : ports_) reports.push_back(port->report());
  return reports;
}

}  // namespace tandem
