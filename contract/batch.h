// A burst of packets handed to an NF, with the packets it chose to drop set aside for the runtime to free.
#pragma once

#include <cstdint>

#include <rte_mbuf.h>

namespace tandem {

inline constexpr uint16_t kMaxBurst = 1024;

struct Batch {
  rte_mbuf** pkts = nullptr;  // packets that are still moving along the chain
  uint16_t count = 0;
  rte_mbuf** dropped = nullptr;  // packets the NF dropped; the runtime frees and counts them
  uint16_t dropped_count = 0;

  // Keeps the packets for which keep(m) is true, in order; moves the others to `dropped`.
  template <typename Predicate>
  void filter(Predicate keep) {
    uint16_t kept = 0;
    for (uint16_t i = 0; i < count; i++) {
      if (keep(pkts[i]))
        pkts[kept++] = pkts[i];
      else
        dropped[dropped_count++] = pkts[i];
    }
    count = kept;
  }
};

}  // namespace tandem
