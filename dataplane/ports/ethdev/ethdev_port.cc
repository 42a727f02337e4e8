// Opening a spec's DPDK device (PCI or virtual), its bursts with their counts, and its report.
#include "ethdev_port.h"

#include <stdexcept>

#include <rte_bus_vdev.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include "packet_socket_drops.h"

namespace tandem {

namespace {
constexpr uint16_t kDescriptors = 1024;  // each way; mbuf_pool_size counts them
constexpr int kTransmitTries = 4;        // a full send queue drains in microseconds: a few tries lose nothing
}  // namespace

EthdevPort::EthdevPort(const PortConfig& config, rte_mempool* pool) : config_(config) {
  if (config_.wire) wire_.emplace();
  auto fail = [&](const std::string& what, int error) {
    throw PortOpenError(
        config_.spec_path + ".device",
        config_.device + ": " + what + (error ? std::string(": ") + rte_strerror(error < 0 ? -error : error) : ""));
  };
  std::string name = config_.device;
  if (config_.pci()) {
    // EAL probed it at start (the allow list, contract/eal_args.cc); a device on no DPDK driver has no port.
    if (rte_eth_dev_get_port_by_name(name.c_str(), &id_) != 0)
      fail("no DPDK port: bind it to a DPDK driver first (dpdk-devbind.py --bind=vfio-pci " + name + ")", 0);
  } else {
    size_t comma = name.find(',');
    vdev_name_ = name.substr(0, comma);
    std::string args = comma == std::string::npos ? "" : name.substr(comma + 1);
    if (int rc = rte_vdev_init(vdev_name_.c_str(), args.c_str()); rc != 0) {
      vdev_name_.clear();
      fail("DPDK cannot create this device (is the driver's name right, and its interface or file there?)", rc);
    }
    if (rte_eth_dev_get_port_by_name(vdev_name_.c_str(), &id_) != 0) fail("no port after creating it", ENODEV);
  }
  opened_ = true;
  rte_eth_conf port_config{};
  if (int rc = rte_eth_dev_configure(id_, 1, 1, &port_config); rc != 0) fail("configure", rc);
  uint16_t rx_descriptors = kDescriptors, tx_descriptors = kDescriptors;
  rte_eth_dev_adjust_nb_rx_tx_desc(id_, &rx_descriptors, &tx_descriptors);
  if (int rc = rte_eth_rx_queue_setup(id_, 0, rx_descriptors, SOCKET_ID_ANY, nullptr, pool); rc != 0)
    fail("receive queue", rc);
  if (int rc = rte_eth_tx_queue_setup(id_, 0, tx_descriptors, SOCKET_ID_ANY, nullptr); rc != 0) fail("send queue", rc);
  if (int rc = rte_eth_dev_start(id_); rc != 0) fail("start", rc);
  started_ = true;
  // A bump in the wire forwards frames addressed to the hosts on either side, not to the port: every frame in.
  // Devices without the notion (rings, null) say ENOTSUP, which is fine.
  rte_eth_promiscuous_enable(id_);
  if (vdev_name_.rfind("net_af_packet", 0) == 0) discard_what_came_before_the_bind();
}

// DPDK's net_af_packet opens its socket for every protocol (ETH_P_ALL) and binds it to its interface only after
// setting up the socket's ring: in between, the kernel queues frames of every interface of the namespace into it (a
// busy loopback's requests were seen to reach a lab's web server through a chain). What the ring holds once the port
// is open came before the run, from anywhere: it is discarded, counted apart, and never enters a chain.
void EthdevPort::discard_what_came_before_the_bind() {
  rte_mbuf* frames[64];
  while (uint16_t count = rte_eth_rx_burst(id_, 0, frames, 64)) {
    counters_.discarded_at_open += count;
    rte_pktmbuf_free_bulk(frames, count);
  }
}

EthdevPort::~EthdevPort() { close(); }

uint16_t EthdevPort::receive(rte_mbuf** pkts, uint16_t max) {
  uint16_t received = rte_eth_rx_burst(id_, 0, pkts, max);
  counters_.received += received;
  if (wire_ && received > 0) wire_->take(pkts, received, wall_clock_ns());
  return received;
}

void EthdevPort::transmit(rte_mbuf** pkts, uint16_t count) {
  if (wire_) {
    uint16_t stamped = wire_->stamp(pkts, count, wall_clock_ns());
    counters_.tx_refused += count - stamped;
    count = stamped;
  }
  uint16_t sent = 0;
  for (int attempt = 0; attempt < kTransmitTries && sent < count; attempt++)
    sent += rte_eth_tx_burst(id_, 0, pkts + sent, static_cast<uint16_t>(count - sent));
  counters_.transmitted += sent;
  if (wire_) wire_->sent(sent);
  if (sent < count) {
    counters_.tx_refused += count - sent;
    rte_pktmbuf_free_bulk(pkts + sent, count - sent);
  }
}

void EthdevPort::read_device_counters() {
  rte_eth_stats stats{};
  if (rte_eth_stats_get(id_, &stats) != 0) {
    device_counters_ = {{"unsupported", true}};
    return;
  }
  device_counters_ = {{"ipackets", stats.ipackets}, {"opackets", stats.opackets}, {"imissed", stats.imissed},
                      {"ierrors", stats.ierrors},   {"oerrors", stats.oerrors},   {"rx_nombuf", stats.rx_nombuf}};
  if (vdev_name_.rfind("net_af_packet", 0) == 0) {
    // Frames the kernel's packet ring had no room for: lost before the device saw them, and not in its imissed.
    size_t at = config_.device.find("iface=");
    std::string interface = at == std::string::npos ? "" : config_.device.substr(at + 6);
    interface = interface.substr(0, interface.find(','));
    if (std::optional<uint64_t> drops = packet_socket_drops(interface)) device_counters_["kernel_ring_drops"] = *drops;
  }
}

void EthdevPort::close() {
  if (started_) {
    if (!removed_) read_device_counters();  // a removed port's were read as it was removed
    rte_eth_dev_stop(id_);
    started_ = false;
  }
  if (opened_) {
    rte_eth_dev_close(id_);  // a device may hold mbufs of its own until then (net_pcap's infinite_rx: its frames)
    opened_ = false;
  }
  if (!vdev_name_.empty()) {
    rte_vdev_uninit(vdev_name_.c_str());
    vdev_name_.clear();
  }
}

void EthdevPort::mark_removed() {
  if (started_) read_device_counters();
  removed_ = true;
}

json EthdevPort::report() const {
  const PortCounters& c = counters_;
  return {{"name", config_.name},
          {"device", config_.device},
          {"received", c.received},
          {"to_chains", c.to_chains},
          {"passed", c.passed},
          {"unhandled_dropped", c.unhandled_dropped},
          {"for_removed_chains", c.for_removed_chains},
          {"transmitted", c.transmitted},
          {"tx_refused", c.tx_refused},
          {"discarded_at_open", c.discarded_at_open},
          {"exact", c.received == c.to_chains + c.passed + c.unhandled_dropped + c.for_removed_chains},
          {"removed", removed_},
          {"device_counters", device_counters_},
          {"wire", wire_ ? wire_->report() : json(nullptr)}};
}

}  // namespace tandem
