// A DPDK device a spec names, opened by the manager for its Rx and Tx stages: probed (a PCI address on the allow
// list, or a virtual device made from its string), one queue each way, started, and counted.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "contract/arg_schema.h"  // json
#include "contract/deployment.h"
#include "dataplane/ports/wire/wire_link.h"

namespace tandem {

// What passed through the port, counted by the stages that use it (the device's own counters are in report()).
struct PortCounters {
  uint64_t received = 0;           // frames the Rx stage took from the device
  uint64_t to_chains = 0;          // ... and handed to a chain's entry
  uint64_t passed = 0;             // ... and passed untouched to another port (PortConfig::pass_unhandled)
  uint64_t unhandled_dropped = 0;  // ... and dropped: no chain handles them and they are not passed (or refused)
  // ... and dropped: the chain whose route took them was removed from the service. Never passed on: they would
  // reach the other side without the removed chain's NFs (a firewall's chain removed must not open the way).
  uint64_t for_removed_chains = 0;
  uint64_t transmitted = 0;        // frames the device took for sending (a chain's output, or frames passed to it)
  uint64_t tx_refused = 0;         // frames it refused (its send queue full; on a wire, no room for the trailer)
  uint64_t discarded_at_open = 0;  // frames the device held when it opened, from before the run: never received
};

// A device that cannot be opened: the spec's fault (a bad device string, an interface that is not there), reported
// as a spec error on `field`.
struct PortOpenError : std::runtime_error {
  PortOpenError(std::string field_path, const std::string& message)
      : std::runtime_error(field_path + ": " + message), field(std::move(field_path)), reason(message) {}
  std::string field;
  std::string reason;
};

class EthdevPort {
 public:
  // Opens and starts the device with receive buffers from `pool`; throws PortOpenError naming the spec's field and
  // the device, with what to do where DPDK says why.
  EthdevPort(const PortConfig& config, rte_mempool* pool);
  ~EthdevPort();
  EthdevPort(const EthdevPort&) = delete;
  EthdevPort& operator=(const EthdevPort&) = delete;

  const PortConfig& config() const { return config_; }
  // Takes up to `max` received frames, never waiting; counted as received (on a wire port, their trailers taken off).
  uint16_t receive(rte_mbuf** pkts, uint16_t max);
  // Sends all `count` frames (on a wire port, numbered): what the device refuses after a few tries is freed and
  // counted as tx_refused.
  void transmit(rte_mbuf** pkts, uint16_t count);
  PortCounters& counters() { return counters_; }
  // Closes the device once traffic is over, its own counters read first: every mbuf it held (its receive
  // descriptors', a device's own frames) goes back to the pool, so the accounting can count them all.
  void close();
  // The port removed from a running service (nothing moves through it any more): its counters read now, and
  // reported as removed; close() (on any thread) then closes the device without touching what report() reads.
  void mark_removed();
  // The stages' counters, the device's (imissed, ierrors, rx_nombuf, oerrors: what the device itself lost), and
  // whether received = to_chains + passed + unhandled_dropped + for_removed_chains.
  json report() const;

 private:
  void read_device_counters();
  void discard_what_came_before_the_bind();

  PortConfig config_;
  std::string vdev_name_;  // a virtual device's name, to remove it again; empty for a PCI device
  uint16_t id_ = 0;
  bool opened_ = false, started_ = false, removed_ = false;
  PortCounters counters_;
  json device_counters_ = json::object();
  std::optional<WireLink> wire_;  // PortConfig::wire: the link leads to another Tandem node
};

}  // namespace tandem
