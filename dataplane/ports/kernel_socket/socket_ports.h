// The kernel-I/O ports: an NF takes frames from a packet socket and hands them on through another, one system
// call per frame (recvfrom/sendto, SCC's "no mux") or up to `mux` frames per call (recvmmsg/sendmmsg).
#pragma once

#include <sys/socket.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <rte_ether.h>
#include <rte_mempool.h>

#include "contract/shm_layout.h"
#include "dataplane/ports/port.h"
#include "packet_socket.h"

namespace tandem {

// Where a switch forwards by destination (link: bridge), the MAC each frame is addressed to; none otherwise.
class NextHop {
 public:
  // "aa:bb:cc:dd:ee:ff", or empty for none; throws std::invalid_argument naming anything else.
  explicit NextHop(const std::string& mac);
  void address(rte_mbuf* m) const {
    if (set_) rte_pktmbuf_mtod(m, rte_ether_hdr*)->dst_addr = mac_;
  }

 private:
  bool set_ = false;
  rte_ether_addr mac_{};
};

// Readies a burst for a kernel link: each frame addressed to `next_hop` and given its record's trailer. A frame
// without room for the trailer is dropped as a refusal (the link's dropped_full). Returns how many are ready,
// moved to the front of `pkts`.
uint16_t ready_for_kernel_link(rte_mbuf** pkts, uint16_t count, const NextHop& next_hop, RingCounters& counters,
                               uint64_t& journal);

// Keeps the run's frames of a burst taken from a kernel link: each one's record restored from its trailer, kept in
// order at the front of `pkts` and counted as the link's dequeued; a frame without a record (not the run's) is
// freed and counted as foreign. Returns how many are kept.
uint16_t keep_run_frames(rte_mbuf** pkts, uint16_t count, RingCounters& counters);

// Takes frames from a receiving packet socket into mbufs of `pool`, restoring each packet's record from its
// trailer (contract/wire_meta.h); counts them as the link's dequeued, and frames without a record as foreign.
// Never waits: it returns what the socket holds now, up to `max`.
class SocketIngress final : public IngressPort {
 public:
  SocketIngress(std::unique_ptr<PacketSocket> socket, rte_mempool* pool, uint16_t mux, RingCounters& counters);
  ~SocketIngress() override;
  uint16_t rx_burst(rte_mbuf** pkts, uint16_t max) override;
  // A socket cannot say how many frames it holds without taking them: 1 when one is there, else 0.
  unsigned waiting() const override;
  // What a runtime blocks on (poll) when every input is empty.
  int fd() const { return socket_->fd(); }
  // Once every sender has stopped: the socket's counts go to the link's counters, and the receive buffers back
  // to the pool.
  void finish();

 private:
  uint16_t receive_one_per_call(rte_mbuf** pkts, uint16_t max);
  uint16_t receive_many_per_call(rte_mbuf** pkts, uint16_t max);
  // Keeps `buffers_` full; false if the pool is empty.
  bool refill();
  // Around every change of which mbufs are receive buffers: the link's receive_buffers_changing set, then cleared
  // once receive_buffers is the number held again (contract/shm_layout.h).
  void begin_buffer_change();
  void end_buffer_change();

  std::unique_ptr<PacketSocket> socket_;
  rte_mempool* pool_;
  uint16_t mux_;
  RingCounters& counters_;
  std::vector<rte_mbuf*> buffers_;  // one per I/O vector, posted before the call
  uint16_t missing_;                // buffers_[0, missing_) are empty, to be refilled
  std::vector<mmsghdr> messages_;
  std::vector<iovec> vectors_;
};

// Hands frames to a sending packet socket with their records as trailers, `mux` per call; what the kernel
// refuses (its queue full) is dropped and counted as the link's dropped_full. With a `next_hop` MAC (a link
// through a bridge), each frame is addressed to it: the bridge forwards by destination.
class SocketEgress final : public EgressPort {
 public:
  SocketEgress(std::unique_ptr<PacketSocket> socket, uint16_t mux, const std::string& next_hop, RingCounters& counters,
               uint64_t& journal)
      : socket_(std::move(socket)),
        mux_(std::max<uint16_t>(mux, 1)),
        next_hop_(next_hop),
        counters_(counters),
        journal_(journal),
        messages_(mux_),
        vectors_(mux_) {}
  uint16_t tx_burst(rte_mbuf** pkts, uint16_t count, const uint8_t* gates) override;
  // The kernel copies what it takes at once; a full socket is found out by sending.
  unsigned room() const override { return kMaxRoom; }

 private:
  static constexpr unsigned kMaxRoom = 1u << 16;
  uint16_t send_one_per_call(rte_mbuf** pkts, uint16_t count);
  uint16_t send_many_per_call(rte_mbuf** pkts, uint16_t count);

  std::unique_ptr<PacketSocket> socket_;
  uint16_t mux_;
  NextHop next_hop_;
  RingCounters& counters_;
  uint64_t& journal_;
  std::vector<mmsghdr> messages_;
  std::vector<iovec> vectors_;
};

}  // namespace tandem
