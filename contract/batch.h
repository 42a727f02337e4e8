// A burst of packets handed to an NF: the packets, the output gate chosen for each, and those it dropped.
#pragma once

#include <cstdint>
#include <cstring>

#include <rte_mbuf.h>

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

  // Keeps the packets for which keep(m) is true, in order and with their gates; moves the others to `dropped`.
  template <typename Predicate>
  void filter(Predicate keep) {
    uint16_t kept = 0;
    for (uint16_t i = 0; i < count; i++) {
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
