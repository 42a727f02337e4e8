// NFVnice's wake-up rule: when the manager wakes an NF asleep on an empty input, once packets reach it.
#pragma once

#include <cstdint>

namespace tandem::nfvnice {

// Each wake-up costs the core a context switch or two, so an NF woken for every packet spends a shared core on
// switching; a threshold lets packets gather, and a bound on their wait keeps a trickle from being stranded.
struct WakeUpRule {
  uint32_t threshold = 1;    // packets its input must hold (OpenNetVM's PKT_WAKEUP_THRESHOLD, 1 there) ...
  uint64_t wait_cycles = 0;  // ... or TSC cycles since the manager first saw fewer waiting
};

// One sleeping NF's input, as the manager's wake-up loop watches it tick after tick.
class PendingInput {
 public:
  // Called each tick the NF sleeps (and is not throttled) with `waiting` packets on its input; true: wake it now.
  bool wake_now(const WakeUpRule& rule, unsigned waiting, uint64_t now_tsc) {
    if (waiting == 0) {
      forget();
      return false;
    }
    if (!pending_) {
      pending_ = true;
      since_tsc_ = now_tsc;
    }
    if (waiting < rule.threshold && now_tsc - since_tsc_ < rule.wait_cycles) return false;
    forget();
    return true;
  }
  // The NF is awake or throttled: what it waits for starts again at its next sleep.
  void forget() { pending_ = false; }

 private:
  bool pending_ = false;
  uint64_t since_tsc_ = 0;
};

}  // namespace tandem::nfvnice
