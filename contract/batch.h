// A burst of packets handed to an NF: the packets, the output gate chosen for each, and those it dropped.
#pragma once

#include <cstdint>
#include <cstring>

#include <rte_mbuf.h>
#include <rte_prefetch.h>

namespace tandem {

inline constexpr uint16_t kMaxBurst = 1024;

// An NF with several outputs (a classifier) sends each packet to one of its gates, as BESS modules and Click
// elements do; a labelled egress port routes by the gate (dataplane/ports/labelled_egress.h). An NF with one
// output leaves every gate 0.
struct Batch {
  rte_mbuf** pkts = nullptr;  // packets that are still moving along the chain
  uint16_t count = 0;
  rte_mbuf** dropped = nullptr;  // packets the NF dropped; the runtime frees and counts them
  uint16_t dropped_count = 0;
  uint8_t* gates = nullptr;  // gates[i]: the output gate of pkts[i]; the runtime sets all to 0 before each NF
  // Pipelined prefetching (μNF, Sec. V-B), set by the runtime: before an NF starts, the first cache line of the
  // first k packets' data is requested; while it works on packet i, that of packet i + k. A packet that another
  // core (the generator, an NF upstream) wrote last is then on its way while the NF still works on earlier ones.
  uint16_t prefetch_distance = 0;

  void prefetch_first() const {
    for (uint16_t i = 0; i < prefetch_distance && i < count; i++) rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void*));
  }
  void prefetch_ahead_of(uint16_t i) const {
    if (prefetch_distance != 0 && i + prefetch_distance < count)
      rte_prefetch0(rte_pktmbuf_mtod(pkts[i + prefetch_distance], void*));
  }

  // Calls work(i) for every packet in order, prefetching ahead.
  template <typename Work>
  void for_each(Work work) {
    for (uint16_t i = 0; i < count; i++) {
      prefetch_ahead_of(i);
      work(i);
    }
  }

  // Keeps the packets for which keep(m) is true, in order and with their gates; moves the others to `dropped`.
  // Prefetches ahead as for_each does (kept <= i: the packet i + k is not overwritten yet).
  template <typename Predicate>
  void filter(Predicate keep) {
    uint16_t kept = 0;
    for (uint16_t i = 0; i < count; i++) {
      prefetch_ahead_of(i);
      if (keep(pkts[i])) {
        gates[kept] = gates[i];
        pkts[kept++] = pkts[i];
      } else {
        dropped[dropped_count++] = pkts[i];
      }
    }
    count = kept;
  }

  void clear_gates() { memset(gates, 0, count); }
};

}  // namespace tandem
