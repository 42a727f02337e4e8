// The futex handshake by which an idle or throttled worker blocks and the manager wakes it (NFVnice's
// wakeup subsystem): no system call on the packet path, one futex wake when an input turns non-empty.
#pragma once

#include <cstdint>
#include <functional>

#include "shm_layout.h"

namespace tandem {

// Worker side. Announces the sleep in `control.idle`, re-checks `should_sleep` (so a wake-up that raced
// with the announcement is not lost), then blocks for at most `timeout_us`. The timeout bounds the cost
// of any missed wake-up and lets the heartbeat advance, so a sleeping worker is never taken for hung.
// Returns true if it actually slept.
bool idle_wait(WorkerControl& control, const std::function<bool()>& should_sleep, uint32_t timeout_us);

// Manager side: wakes a worker that sleeps in idle_wait; a no-op (no system call) when it is awake.
void idle_wake(WorkerControl& control);

inline bool idle_sleeping(const WorkerControl& control) {
  return __atomic_load_n(&control.idle, __ATOMIC_SEQ_CST) != 0;
}

}  // namespace tandem
