// The point-to-point port: one single-producer, single-consumer rte_ring in hugepage memory, with its counters.
#pragma once

#include <rte_ring.h>

#include "contract/shm_layout.h"
#include "port.h"

namespace tandem {

// Takes packets from a ring and counts them as dequeued (the consumer's side of RingCounters).
class RingIngress final : public IngressPort {
 public:
  RingIngress(rte_ring* ring, RingCounters& counters) : ring_(ring), counters_(counters) {}
  uint16_t rx_burst(rte_mbuf** pkts, uint16_t max) override;
  unsigned waiting() const override { return rte_ring_count(ring_); }

 private:
  rte_ring* ring_;
  RingCounters& counters_;
};

// Puts packets on a ring; those a full ring refuses are dropped and counted as the ring's dropped_full, under
// `journal` (free_counted.h).
class RingEgress final : public EgressPort {
 public:
  RingEgress(rte_ring* ring, RingCounters& counters, uint64_t& journal)
      : ring_(ring), counters_(counters), journal_(journal) {}
  uint16_t tx_burst(rte_mbuf** pkts, uint16_t count, const uint8_t* gates) override;
  unsigned room() const override { return rte_ring_free_count(ring_); }

 private:
  rte_ring* ring_;
  RingCounters& counters_;
  uint64_t& journal_;
};

}  // namespace tandem
