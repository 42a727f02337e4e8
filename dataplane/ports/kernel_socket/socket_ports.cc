// The kernel-I/O ports' bursts: the system calls, the records' trailers and the link's counters.
#include "socket_ports.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

#include "contract/batch.h"
#include "contract/wire_meta.h"
#include "dataplane/ports/free_counted.h"

namespace tandem {

NextHop::NextHop(const std::string& mac) : set_(!mac.empty()) {
  if (set_ && rte_ether_unformat_addr(mac.c_str(), &mac_) != 0)
    throw std::invalid_argument("'" + mac + "' is not a MAC address");
}

uint16_t ready_for_kernel_link(rte_mbuf** pkts, uint16_t count, const NextHop& next_hop, RingCounters& counters,
                               uint64_t& journal) {
  uint16_t ready = 0;
  for (uint16_t i = 0; i < count; i++) {
    next_hop.address(pkts[i]);
    if (append_wire_meta(pkts[i]))
      pkts[ready++] = pkts[i];
    else  // no tailroom for the record (a frame near the buffer's size): refused like a full socket
      free_counted(&pkts[i], 1, counters.dropped_full, journal);
  }
  return ready;
}

uint16_t keep_run_frames(rte_mbuf** pkts, uint16_t count, RingCounters& counters) {
  uint16_t kept = 0;
  uint64_t foreign = 0;
  for (uint16_t i = 0; i < count; i++) {
    if (take_wire_meta(pkts[i])) {
      pkts[kept++] = pkts[i];
    } else {  // not one of the run's packets (the interfaces are the run's own: rare)
      rte_pktmbuf_free(pkts[i]);
      foreign++;
    }
  }
  if (foreign) counter_add(counters.foreign, foreign);
  counter_add(counters.dequeued, static_cast<uint64_t>(kept));
  return kept;
}

SocketIngress::SocketIngress(std::unique_ptr<PacketSocket> socket, rte_mempool* pool, uint16_t mux,
                             RingCounters& counters)
    : socket_(std::move(socket)),
      pool_(pool),
      mux_(std::max<uint16_t>(mux, 1)),
      counters_(counters),
      buffers_(mux_, nullptr),
      missing_(mux_),
      messages_(mux_),
      vectors_(mux_) {
  if (!refill())
    throw std::runtime_error("packet socket on " + socket_->interface() + ": no mbufs for its receive buffers");
}

SocketIngress::~SocketIngress() { finish(); }

void SocketIngress::begin_buffer_change() { flag_store(counters_.receive_buffers_changing, 1u); }

void SocketIngress::end_buffer_change() {
  counter_store(counters_.receive_buffers, static_cast<uint64_t>(buffers_.size() - missing_));
  flag_store(counters_.receive_buffers_changing, 0u);
}

bool SocketIngress::refill() {
  if (missing_ == 0) return true;
  // The empty slots are always the first `missing_` (each call fills from the front): only those are walked.
  begin_buffer_change();
  while (missing_ > 0) {
    rte_mbuf* buffer = rte_pktmbuf_alloc(pool_);
    if (buffer == nullptr) break;
    buffers_[--missing_] = buffer;
  }
  end_buffer_change();
  return missing_ == 0;
}

unsigned SocketIngress::waiting() const {
  pollfd ready{socket_->fd(), POLLIN, 0};
  return poll(&ready, 1, 0) == 1 && (ready.revents & POLLIN) ? 1 : 0;
}

uint16_t SocketIngress::rx_burst(rte_mbuf** pkts, uint16_t max) {
  if (!refill()) return 0;  // the pool is dry: the frames wait in the socket (or it drops them, counted)
  return mux_ == 1 ? receive_one_per_call(pkts, max) : receive_many_per_call(pkts, max);
}

uint16_t SocketIngress::receive_one_per_call(rte_mbuf** pkts, uint16_t max) {
  uint16_t taken = 0;
  while (taken < max) {
    rte_mbuf* buffer = buffers_[0];
    ssize_t length = recvfrom(socket_->fd(), rte_pktmbuf_mtod(buffer, void*), rte_pktmbuf_tailroom(buffer),
                              MSG_DONTWAIT, nullptr, nullptr);
    if (length < 0) break;  // EAGAIN: nothing more now
    // From a buffer to a frame the NF holds (counted as dequeued): the counts change in two places, journalled.
    begin_buffer_change();
    buffers_[0] = nullptr;
    missing_ = 1;
    buffer->data_len = static_cast<uint16_t>(length);
    buffer->pkt_len = static_cast<uint32_t>(length);
    pkts[taken] = buffer;
    taken += keep_run_frames(pkts + taken, 1, counters_);
    end_buffer_change();
    if (!refill()) break;
  }
  return taken;
}

uint16_t SocketIngress::receive_many_per_call(rte_mbuf** pkts, uint16_t max) {
  unsigned want = std::min<unsigned>(max, mux_);
  for (unsigned i = 0; i < want; i++) {
    vectors_[i] = {rte_pktmbuf_mtod(buffers_[i], void*), rte_pktmbuf_tailroom(buffers_[i])};
    messages_[i] = {};
    messages_[i].msg_hdr.msg_iov = &vectors_[i];
    messages_[i].msg_hdr.msg_iovlen = 1;
  }
  int received = recvmmsg(socket_->fd(), messages_.data(), want, MSG_DONTWAIT, nullptr);
  if (received <= 0) return 0;
  // From buffers to frames the NF holds (counted as dequeued): the counts change in two places, journalled.
  begin_buffer_change();
  for (int i = 0; i < received; i++) {
    pkts[i] = buffers_[i];
    pkts[i]->data_len = static_cast<uint16_t>(messages_[i].msg_len);
    pkts[i]->pkt_len = messages_[i].msg_len;
    buffers_[i] = nullptr;
  }
  missing_ = static_cast<uint16_t>(received);  // the first `received` slots, refilled before the next call
  uint16_t kept = keep_run_frames(pkts, static_cast<uint16_t>(received), counters_);
  end_buffer_change();
  return kept;
}

void SocketIngress::finish() {
  if (!socket_) return;
  PacketSocket::Statistics counts = socket_->statistics();
  __atomic_store_n(&counters_.socket_arrived, counts.arrived, __ATOMIC_RELAXED);
  __atomic_store_n(&counters_.socket_dropped, counts.dropped, __ATOMIC_RELAXED);
  __atomic_store_n(&counters_.socket_counted, 1u, __ATOMIC_RELEASE);
  begin_buffer_change();
  for (rte_mbuf*& buffer : buffers_)
    if (buffer != nullptr) {
      rte_pktmbuf_free(buffer);
      buffer = nullptr;
    }
  missing_ = static_cast<uint16_t>(buffers_.size());
  end_buffer_change();
  socket_.reset();
}

uint16_t SocketEgress::tx_burst(rte_mbuf** pkts, uint16_t count, const uint8_t* /*gates: one way on*/) {
  uint16_t ready = ready_for_kernel_link(pkts, count, next_hop_, counters_, journal_);
  uint16_t sent = mux_ == 1 ? send_one_per_call(pkts, ready) : send_many_per_call(pkts, ready);
  // The kernel copied what it took: the mbufs go back to the pool either way, counted as sent or as refused.
  if (sent > 0) free_counted(pkts, sent, counters_.enqueued, journal_);
  if (sent < ready) free_counted(pkts + sent, static_cast<uint16_t>(ready - sent), counters_.dropped_full, journal_);
  return sent;
}

uint16_t SocketEgress::send_one_per_call(rte_mbuf** pkts, uint16_t count) {
  // A refused frame is dropped and the rest still offered: the kernel refuses one frame, not the link.
  uint16_t sent = 0;
  for (uint16_t i = 0; i < count; i++) {
    if (sendto(socket_->fd(), rte_pktmbuf_mtod(pkts[i], void*), rte_pktmbuf_data_len(pkts[i]), MSG_DONTWAIT, nullptr,
               0) < 0)
      continue;
    std::swap(pkts[sent++], pkts[i]);  // the sent ones first, in order
  }
  return sent;
}

uint16_t SocketEgress::send_many_per_call(rte_mbuf** pkts, uint16_t count) {
  uint16_t sent = 0;
  while (sent < count) {
    unsigned chunk = std::min<unsigned>(count - sent, mux_);
    for (unsigned i = 0; i < chunk; i++) {
      rte_mbuf* m = pkts[sent + i];
      vectors_[i] = {rte_pktmbuf_mtod(m, void*), rte_pktmbuf_data_len(m)};
      messages_[i] = {};
      messages_[i].msg_hdr.msg_iov = &vectors_[i];
      messages_[i].msg_hdr.msg_iovlen = 1;
    }
    int accepted = sendmmsg(socket_->fd(), messages_.data(), chunk, MSG_DONTWAIT);
    if (accepted <= 0) break;  // the socket refuses: the rest of the burst is dropped
    sent = static_cast<uint16_t>(sent + accepted);
    if (static_cast<unsigned>(accepted) < chunk) break;
  }
  return sent;
}

}  // namespace tandem
