// Probing, starting and removing the net_af_packet port, and its bursts with the records' trailers.
#include "af_packet_ethdev.h"

#include <algorithm>
#include <stdexcept>

#include <rte_bus_vdev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include "contract/batch.h"
#include "contract/wire_meta.h"
#include "dataplane/ports/free_counted.h"

namespace tandem {

namespace {
constexpr uint16_t kDescriptors = 1024;
}

AfPacketPort::AfPacketPort(const std::string& device_name, const std::string& interface, rte_mempool* pool,
                           uint32_t queue_frames)
    : device_name_(device_name) {
  // The PMD's ring: frames of 2 KiB, two to a 4 KiB block.
  uint32_t frames = std::max<uint32_t>(64, (queue_frames + 1) / 2 * 2);
  std::string args = "iface=" + interface + ",qpairs=1,blocksz=4096,framesz=2048,framecnt=" + std::to_string(frames);
  auto fail = [&](const std::string& what, int error) {
    throw std::runtime_error("DPDK net_af_packet port on " + interface + ": " + what + ": " +
                             rte_strerror(error < 0 ? -error : error));
  };
  if (int rc = rte_vdev_init(device_name.c_str(), args.c_str()); rc != 0)
    fail("cannot create it (is the interface there?)", rc);
  if (rte_eth_dev_get_port_by_name(device_name.c_str(), &port_) != 0) fail("not found after creating it", ENODEV);
  rte_eth_conf config{};
  if (int rc = rte_eth_dev_configure(port_, 1, 1, &config); rc != 0) fail("configure", rc);
  if (int rc = rte_eth_rx_queue_setup(port_, 0, kDescriptors, SOCKET_ID_ANY, nullptr, pool); rc != 0)
    fail("receive queue", rc);
  if (int rc = rte_eth_tx_queue_setup(port_, 0, kDescriptors, SOCKET_ID_ANY, nullptr); rc != 0) fail("send queue", rc);
  if (int rc = rte_eth_dev_start(port_); rc != 0) fail("start", rc);
  started_ = true;
}

AfPacketPort::~AfPacketPort() {
  if (started_) rte_eth_dev_stop(port_);
  rte_eth_dev_close(port_);
  rte_vdev_uninit(device_name_.c_str());
}

uint16_t EthdevEgress::tx_burst(rte_mbuf** pkts, uint16_t count, const uint8_t* /*gates: one way on*/) {
  uint16_t ready = ready_for_kernel_link(pkts, count, next_hop_, counters_, journal_);
  uint16_t sent =
      rte_eth_tx_burst(port_, 0, pkts, ready);  // the PMD copies each frame into the kernel's ring and frees it
  counter_add(counters_.enqueued, static_cast<uint64_t>(sent));
  if (sent < ready) free_counted(pkts + sent, static_cast<uint16_t>(ready - sent), counters_.dropped_full, journal_);
  return sent;
}

uint16_t EthdevIngress::rx_burst(rte_mbuf** pkts, uint16_t max) {
  uint16_t received = rte_eth_rx_burst(port_, 0, pkts, std::min<uint16_t>(max, kMaxBurst));
  return keep_run_frames(pkts, received, counters_);
}

}  // namespace tandem
