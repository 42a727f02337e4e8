// Where the generator sends each chain's packets and the sink takes them back: the chain's entry and exit rings,
// or, where the chain's first or last NF is kernel-I/O, a DPDK net_af_packet port on its veth in the root namespace.
// And the spec's ports: their Rx stages, which feed chains in the generator's place, and the ports the chains'
// output leaves by in the sink's.
#pragma once

#include <memory>
#include <vector>

#include <rte_mempool.h>
#include <rte_ring.h>

#include "contract/deployment.h"
#include "contract/shm_layout.h"
#include "dataplane/ports/ethdev/ethdev_port.h"
#include "dataplane/ports/ethdev/port_receiver.h"
#include "dataplane/ports/kernel_socket/af_packet_ethdev.h"
#include "dataplane/ports/port.h"

namespace tandem {

class ChainEnds {
 public:
  // Opens every chain's ends; throws std::runtime_error if a kernel chain's port cannot be made.
  ChainEnds(const Deployment& deployment, rte_mempool* pool, const std::vector<rte_ring*>& rings, StatsZone& stats);
  // A chain added to a running service (its NFs' rings made; a kernel chain's veths too): its entry and exit.
  std::pair<std::unique_ptr<EgressPort>, std::unique_ptr<IngressPort>> open_added_chain(
      const Deployment& deployment, const ChainConfig& chain, const std::vector<rte_ring*>& rings, StatsZone& stats);
  // A chain removed from a running service, drained: the DPDK ports on its veths closed (none for a DPDK chain).
  void close_kernel_ends(const ChainConfig& chain);
  // A port added to a running service (its index the next), opened and started.
  void adopt_added_port(std::unique_ptr<EthdevPort> port) { ports_.push_back(std::move(port)); }
  // By chain index; each taken once, by the generator and the sink.
  std::vector<std::unique_ptr<EgressPort>> take_entries() { return std::move(entries_); }
  std::vector<std::unique_ptr<IngressPort>> take_exits() { return std::move(exits_); }
  bool any_kernel_exit() const { return any_kernel_exit_; }
  // The Rx stage of every port some chain takes its traffic from; taken once, by the generator.
  std::vector<std::unique_ptr<PortReceiver>> take_receivers() { return std::move(receivers_); }
  // By chain index: the port its output leaves by, or null (the sink frees it).
  std::vector<EthdevPort*> exit_ports() const;
  // The spec's port `index` (PortConfig::index), opened at the start; null if there is none.
  EthdevPort* port(int index) const;
  // A chain added to a running service that takes its frames from a port: its route there, and the Rx stage the
  // port needs if no chain took from it before (null: the generator's stage for the port takes the route).
  PortReceiver::Route route_of(const ChainConfig& chain) const;
  std::unique_ptr<PortReceiver> receiver_for_added(const ChainConfig& chain) const;
  // Once traffic is over: every port closed (their buffers back in the pool); their reports stay.
  void close_ports();
  json port_reports() const;

 private:
  void open_receivers(const Deployment& deployment);
  // Chain `chain`'s entry and exit, appended to entries_ and exits_.
  void open_ends(const Deployment& deployment, const ChainConfig& chain, const std::vector<rte_ring*>& rings,
                 StatsZone& stats);

  rte_mempool* pool_;
  std::vector<std::unique_ptr<EgressPort>> entries_;
  std::vector<std::unique_ptr<IngressPort>> exits_;
  std::vector<std::unique_ptr<AfPacketPort>> af_packet_ports_;  // outlive the generator's and sink's use of them
  std::vector<std::unique_ptr<EthdevPort>> ports_;              // the spec's, by PortConfig::index; the same
  std::vector<std::unique_ptr<PortReceiver>> receivers_;
  std::vector<int> to_port_;  // by chain
  bool any_kernel_exit_ = false;
  uint64_t entry_drop_journal_ = 0;  // the entry ports' free journal (free_counted.h); the manager is the only writer
};

}  // namespace tandem
