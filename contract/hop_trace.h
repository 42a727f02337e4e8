// Per-hop timestamps of sampled packets (run --profile): when each NF got the packet, began and ended its batch,
// and how much of the packet's wait in the NF's input the NF spent on other work. The sink adds them up into a
// breakdown of each chain's latency (dataplane/sink/latency_breakdown.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "deployment.h"
#include "packet_meta.h"

namespace tandem {

// Hops a trace keeps: a longer path is counted as untraced (the breakdown says how many).
inline constexpr int kMaxTracedHops = 16;
inline constexpr char kTraceZoneName[] = "tandem_traces";
// No lookup was possible: the packet waited longer than the NF's remembered batches reach back.
inline constexpr uint64_t kBusyUnknown = ~uint64_t{0};

struct HopTrace {
  uint64_t arrive_tsc;  // the NF's process took the packet from its input (or the previous NF of its segment ended)
  uint64_t start_tsc;   // the NF's batch began
  uint64_t end_tsc;     // the NF's batch ended
  uint64_t busy_while_queued;  // cycles the NF spent on other batches while the packet sat in its input ring
  uint16_t nf;                 // global NF index
};

struct TraceSlot {
  uint64_t seq;      // the packet that owns the slot: a slot is reused, and an older packet must not write into it
  uint8_t hops;      // hops recorded; more than kMaxTracedHops: the path was too long to trace
  uint8_t untraced;  // hops that could not be recorded (a parallel branch: its NFs run at once)
  HopTrace hop[kMaxTracedHops];
};

// Slots for a run: a slot is reused that many traced packets later, and twice the traced share of the mbuf pool
// keeps that beyond any packet's life in the run; one that still outlives it loses its trace (counted), never
// mixes its hops into another's.
inline uint32_t trace_slot_count(const Deployment& deployment) {
  uint32_t traced_in_pool =
      mbuf_pool_size(deployment) / (deployment.trace_sample_every ? deployment.trace_sample_every : 1) + 1;
  return traced_in_pool * 2 > 4096 ? traced_in_pool * 2 : 4096;
}

// The trace zone's size: the manager reserves it, the catalog counts it into the run's hugepages.
inline size_t trace_zone_bytes(const Deployment& deployment) {
  return sizeof(TraceSlot) * trace_slot_count(deployment);
}

// Whether the generator traces the latency-sampled packet number `sample` (its sequence number / the latency
// sampling period): one in `ratio`, chosen by a multiplicative hash rather than by position, so that the traced are
// a fair subset of the sampled, not always the first packet of a generator burst.
inline bool traced_sample(uint64_t sample, uint32_t ratio) {
  return ((sample * 0x9E3779B97F4A7C15ull) >> 32) % ratio == 0;  // Fibonacci hashing
}

// `slots`: the trace zone, one slot per traced packet in flight (trace_slot_count of them, one memzone).
inline TraceSlot* trace_of(TraceSlot* slots, const PacketMeta* meta) {
  if (!slots || !meta->trace_slot) return nullptr;
  TraceSlot* slot = &slots[meta->trace_slot - 1];
  return slot->seq == meta->seq ? slot : nullptr;
}

// The next hop of a traced packet, or null when its path is longer than a trace keeps.
inline HopTrace* next_hop(TraceSlot& slot) {
  uint8_t hop = slot.hops;
  if (slot.hops <= kMaxTracedHops) slot.hops++;
  return hop < kMaxTracedHops ? &slot.hop[hop] : nullptr;
}

}  // namespace tandem
