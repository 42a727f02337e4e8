// Per-hop timestamps of traced packets.
#include "hop_tracing.h"

#include <algorithm>

namespace tandem {

void trace_batch_start(TraceSlot* slots, const TracedPackets& traced, uint16_t nf, uint64_t arrive_tsc,
                       uint64_t start_tsc, const BusyHistory* input_history) {
  for (uint16_t i = 0; i < traced.count; i++) {
    const PacketMeta* meta = meta_of(traced.pkts[i]);
    TraceSlot* slot = trace_of(slots, meta);
    if (!slot) continue;
    // The packet has waited since the last traced hop ended, or since the generator sent it.
    uint64_t waiting_since =
        slot->hops == 0 ? meta->tx_tsc : slot->hop[std::min<int>(slot->hops, kMaxTracedHops) - 1].end_tsc;
    HopTrace* hop = next_hop(*slot);
    if (!hop) continue;
    hop->nf = nf;
    hop->arrive_tsc = arrive_tsc;
    hop->start_tsc = start_tsc;
    hop->end_tsc = 0;
    hop->busy_while_queued = input_history ? input_history->busy_since(waiting_since) : 0;
  }
}

void trace_batch_end(TraceSlot* slots, const TracedPackets& traced, uint16_t nf, uint64_t end_tsc) {
  for (uint16_t i = 0; i < traced.count; i++) {
    TraceSlot* slot = trace_of(slots, meta_of(traced.pkts[i]));
    if (!slot || slot->hops == 0 || slot->hops > kMaxTracedHops) continue;
    HopTrace& hop = slot->hop[slot->hops - 1];
    if (hop.nf == nf && hop.end_tsc == 0) hop.end_tsc = end_tsc;
  }
}

void trace_branch(TraceSlot* slots, const TracedPackets& traced) {
  for (uint16_t i = 0; i < traced.count; i++) {
    TraceSlot* slot = trace_of(slots, meta_of(traced.pkts[i]));
    if (slot) __atomic_fetch_add(&slot->untraced, uint8_t{1}, __ATOMIC_RELAXED);  // siblings run in other processes
  }
}

}  // namespace tandem
