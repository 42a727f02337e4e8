// Per-hop timestamps of the traced packets in a segment's batch (run --profile; contract/hop_trace.h).
#pragma once

#include <cstdint>

#include <rte_mbuf.h>

#include "busy_history.h"
#include "contract/batch.h"
#include "contract/hop_trace.h"

namespace tandem {

// The traced packets of a batch, picked out as the runtime stamps its hops (the meta's cache line is in hand then):
// the calls below then touch only them, so tracing one packet in 256 costs next to nothing per packet.
struct TracedPackets {
  rte_mbuf* pkts[kMaxBurst];
  uint16_t count = 0;
  void note(rte_mbuf* m) {
    if (meta_of(m)->trace_slot) pkts[count++] = m;
  }
};

// Before NF `nf` works on the batch: a hop for each traced packet, with when it arrived and when the batch began.
// `input_history`: the NF's own batches, when the packets waited in a ring for it (the segment's first NF), so the
// hop says how much of that wait the NF spent on other packets; null when they came straight from the NF before.
void trace_batch_start(TraceSlot* slots, const TracedPackets& traced, uint16_t nf, uint64_t arrive_tsc,
                       uint64_t start_tsc, const BusyHistory* input_history);
// After NF `nf` worked on the batch: the end of each traced packet's hop (those it dropped too: never read).
void trace_batch_end(TraceSlot* slots, const TracedPackets& traced, uint16_t nf, uint64_t end_tsc);
// A parallel branch's NF: its siblings work on the same packet at once, so no hop is recorded, only counted.
void trace_branch(TraceSlot* slots, const TracedPackets& traced);

}  // namespace tandem
