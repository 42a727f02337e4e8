// The ingress and egress interface through which every packet mover (worker runtimes, generator, sink) moves packets.
#pragma once

#include <cstdint>

#include <rte_mbuf.h>

namespace tandem {

// Where a stage takes packets from. The caller owns what rx_burst returns.
class IngressPort {
 public:
  virtual ~IngressPort() = default;
  // Takes up to `max` waiting packets into `pkts`, never waiting for more; returns how many.
  virtual uint16_t rx_burst(rte_mbuf** pkts, uint16_t max) = 0;
  // Packets waiting now (a runtime that sleeps on empty input asks this).
  virtual unsigned waiting() const = 0;
};

// Where a stage hands packets on. tx_burst takes all of them: what the next stage cannot accept is dropped
// here, counted where the accounting expects it and freed, so a caller never frees or counts a refusal.
class EgressPort {
 public:
  virtual ~EgressPort() = default;
  // Hands on `count` packets; returns how many the next stage accepted (the rest were dropped). `gates[i]` is
  // the output gate the last NF chose for pkts[i] (contract/batch.h); nullptr when the sender has none (all 0).
  // Only a port that routes by gate reads them.
  virtual uint16_t tx_burst(rte_mbuf** pkts, uint16_t count, const uint8_t* gates) = 0;
  // Packets the next stage would accept now (the generator builds no frame that would be refused).
  virtual unsigned room() const = 0;
  // Called when its stage polled and found nothing: a port that holds packets back (scaled_egress.h) moves them
  // on as the next stage makes room, also when no new packets come.
  virtual void flush() {}
  // Called once its worker stops: a port that holds packets back drops them, counted where the accounting
  // expects them, so a worker that stops cleanly holds none.
  virtual void drop_held() {}
};

}  // namespace tandem
