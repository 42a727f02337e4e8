// Per-packet metadata kept in the mbuf private area: sequence number, TSC timestamp and hop record.
#pragma once

#include <cstdint>

#include <rte_mbuf.h>

namespace tandem {

// Nodes a packet may pass through a chain's graph (the NFs of a chain: UNiS and Bubble study long ones).
inline constexpr int kMaxHops = 64;

struct PacketMeta {
  uint64_t seq;         // per-chain sequence number set by the generator
  uint64_t tx_tsc;      // TSC when the generator enqueued the packet
  uint16_t chain;       // index of the chain the packet belongs to
  uint32_t trace_slot;  // run --profile: 1 + the packet's slot in the trace zone (contract/hop_trace.h); 0 = untraced
  uint8_t hop_count;    // NFs that have stamped the packet so far
  uint8_t hops[kMaxHops];  // global NF index of each NF in the order they processed it
  // At the hops of a labelled fan-out, the gate its NF chose (written by its labelled egress, which routed the
  // packet by it): the sink checks the packet left along the edge with that label. Elsewhere unused.
  uint8_t hop_gates[kMaxHops];
  // A parallel group (dataplane/ports/parallel_ports.h): the copies a branch port made of the packet, and the
  // branches that finished it (each branch's marker adds one, atomically: branches run in several processes).
  uint8_t parallel_width;
  uint32_t parallel_finished;
  // The NFs of parallel branches that processed the packet, one bit per global NF index: branches stamp here
  // (an atomic OR: they run in several processes at once), not in the ordered record.
  uint64_t branch_hops[2];
};

inline constexpr uint16_t kMbufPrivSize = (sizeof(PacketMeta) + RTE_MBUF_PRIV_ALIGN - 1) & ~(RTE_MBUF_PRIV_ALIGN - 1);

inline PacketMeta* meta_of(rte_mbuf* m) { return static_cast<PacketMeta*>(rte_mbuf_to_priv(m)); }

// Each NF stamps the packets it processes (a branch's NF: stamp_branch_hop); the sink checks the record is a path of
// the chain's graph.
inline void stamp_hop(rte_mbuf* m, uint8_t nf_index) {
  PacketMeta* meta = meta_of(m);
  if (meta->hop_count < kMaxHops) meta->hops[meta->hop_count] = nf_index;
  meta->hop_count++;
}

// The labelled egress, as it routes a packet by `gate`: the gate goes beside the hop of the NF that chose it.
inline void record_gate(rte_mbuf* m, uint8_t gate) {
  PacketMeta* meta = meta_of(m);
  if (meta->hop_count > 0 && meta->hop_count <= kMaxHops) meta->hop_gates[meta->hop_count - 1] = gate;
}

inline void stamp_branch_hop(rte_mbuf* m, uint8_t nf_index) {
  __atomic_fetch_or(&meta_of(m)->branch_hops[nf_index / 64], uint64_t{1} << (nf_index % 64), __ATOMIC_RELAXED);
}

// What the generator does to every new packet's record.
inline void clear_hops(PacketMeta* meta) {
  meta->hop_count = 0;
  meta->trace_slot = 0;
  meta->branch_hops[0] = meta->branch_hops[1] = 0;
}

}  // namespace tandem
