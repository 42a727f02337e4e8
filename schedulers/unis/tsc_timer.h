// The UNiS timer subsystem: TSC deadlines polled from the scheduler's loop; no kernel timer on the decision path.
#pragma once

#include <cstdint>

namespace tandem::unis {

// A one-shot deadline on the time-stamp counter. UNiS polls it every loop iteration instead of arming a
// kernel timer: a poll costs a few cycles, and the paper needs microsecond granularity (DPDK's rte_timer
// does the same underneath, through a callback that sets a flag the loop then polls).
class TscTimer {
 public:
  void reset(uint64_t now_tsc, uint64_t period_cycles) { deadline_ = now_tsc + period_cycles; }
  bool expired(uint64_t now_tsc) const { return now_tsc >= deadline_; }
  uint64_t deadline() const { return deadline_; }

 private:
  uint64_t deadline_ = 0;  // expired until first reset
};

}  // namespace tandem::unis
