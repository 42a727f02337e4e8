// The manager's ends of a kernel chain: DPDK's net_af_packet port on a veth in the root namespace, through which
// the generator sends into the chain and the sink receives from it, with the packets' records as trailers.
#pragma once

#include <cstdint>
#include <string>

#include <rte_mempool.h>

#include "contract/shm_layout.h"
#include "dataplane/ports/port.h"
#include "socket_ports.h"  // NextHop

namespace tandem {

// A started net_af_packet port (one queue each way) on `interface`, removed again when destroyed. Its kernel
// ring holds about `queue_frames` frames. Throws std::runtime_error naming the interface.
class AfPacketPort {
 public:
  AfPacketPort(const std::string& device_name, const std::string& interface, rte_mempool* pool, uint32_t queue_frames);
  ~AfPacketPort();
  AfPacketPort(const AfPacketPort&) = delete;
  AfPacketPort& operator=(const AfPacketPort&) = delete;
  uint16_t id() const { return port_; }
  const std::string& device_name() const { return device_name_; }

 private:
  std::string device_name_;
  uint16_t port_ = 0;
  bool started_ = false;
};

// The generator's entry into a kernel chain: frames with their records go out of the port; those it does not
// take are dropped and counted as the entry link's dropped_full.
class EthdevEgress final : public EgressPort {
 public:
  // With a `next_hop` MAC (a chain behind a switch), every frame is addressed to the chain's first NF.
  EthdevEgress(uint16_t port, const std::string& next_hop, RingCounters& counters, uint64_t& journal)
      : port_(port), next_hop_(next_hop), counters_(counters), journal_(journal) {}
  uint16_t tx_burst(rte_mbuf** pkts, uint16_t count, const uint8_t* gates) override;
  // The kernel ring's free slots are not visible: the generator builds a burst, and what is refused is counted.
  unsigned room() const override { return 1u << 16; }

 private:
  uint16_t port_;
  NextHop next_hop_;
  RingCounters& counters_;
  uint64_t& journal_;
};

// The sink's exit from a kernel chain: frames come in from the port, their records restored; counted as the exit
// link's dequeued (foreign frames: freed and counted apart).
class EthdevIngress final : public IngressPort {
 public:
  EthdevIngress(uint16_t port, RingCounters& counters) : port_(port), counters_(counters) {}
  uint16_t rx_burst(rte_mbuf** pkts, uint16_t max) override;
  unsigned waiting() const override { return 0; }  // not asked of the sink's ports

 private:
  uint16_t port_;
  RingCounters& counters_;
};

}  // namespace tandem
