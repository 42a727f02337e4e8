// A wire port's two halves (a port whose link leads to another Tandem node): what leaves is numbered and stamped
// with the link trailer, what comes in has it taken off and its number counted, so that what left one node =
// what the next received + what the wire lost (+ what was still on the wire at the stop), exactly.
#pragma once

#include <cstdint>

#include <rte_mbuf.h>

#include "contract/arg_schema.h"  // json
#include "wire_sequence.h"

namespace tandem {

class WireLink {
 public:
  // Stamps the next numbers on a burst about to be sent; a frame with no room for the trailer (or chained) cannot
  // be sent on the link: it is freed, counted as no_room, and taken out of the burst. Returns the frames left.
  uint16_t stamp(rte_mbuf** pkts, uint16_t count, uint64_t now_ns);
  // The first `sent` of the stamped burst went: their numbers are used; the rest were refused and freed by the
  // port, and their numbers go to the next burst's frames (a refused frame never leaves a gap).
  void sent(uint16_t sent) { next_seq_ += sent; }
  // Takes the trailers off a received burst and counts their numbers; a frame without one is counted foreign and
  // left as it came (the kernel's own frames on the link).
  void take(rte_mbuf** pkts, uint16_t count, uint64_t now_ns);

  uint64_t frames_sent() const { return next_seq_; }
  const WireSequence& sequence() const { return sequence_; }
  // Sent and received sides, and the one-way delay by the two hosts' clocks (exact where they are one clock).
  json report() const;

 private:
  uint64_t next_seq_ = 0;
  uint64_t no_room_ = 0;
  WireSequence sequence_;
  uint64_t foreign_ = 0;
  uint64_t delay_count_ = 0;
  int64_t delay_sum_ns_ = 0, delay_max_ns_ = 0, delay_min_ns_ = 0;
};

// CLOCK_REALTIME in nanoseconds: the clock two hosts can agree on (NTP, PTP), unlike their TSCs.
uint64_t wall_clock_ns();

}  // namespace tandem
