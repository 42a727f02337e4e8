// The point-to-point ring port's burst functions.
#include "ring_port.h"

#include "free_counted.h"

namespace tandem {

uint16_t RingIngress::rx_burst(rte_mbuf** pkts, uint16_t max) {
  unsigned n = rte_ring_dequeue_burst(ring_, reinterpret_cast<void**>(pkts), max, nullptr);
  if (n > 0) counter_add(counters_.dequeued, static_cast<uint64_t>(n));
  return static_cast<uint16_t>(n);
}

uint16_t RingEgress::tx_burst(rte_mbuf** pkts, uint16_t count, const uint8_t* /*gates: one way on*/) {
  unsigned sent = rte_ring_enqueue_burst(ring_, reinterpret_cast<void**>(pkts), count, nullptr);
  counter_add(counters_.enqueued, static_cast<uint64_t>(sent));
  // The next ring is full: the packets are lost here, after the work upstream was spent on them.
  if (sent < count) free_counted(pkts + sent, static_cast<uint16_t>(count - sent), counters_.dropped_full, journal_);
  return static_cast<uint16_t>(sent);
}

}  // namespace tandem
