// How long a thread asleep on a futex takes to run again after the wake-up call, by how long its core was idle: what
// a sleeping worker adds to the first packet after an idle spell (on a VM, the host must run the halted vCPU again).
#pragma once

#include "measurement.h"

namespace tandem {

// A thread pinned to `core` sleeps on a futex for `idle_ms`, then a thread pinned to `waker_core` wakes it; the time
// from the wake call until the sleeper runs, in nanoseconds, averaged over a few wake-ups per repetition.
// Unsupported if the cores are the same or refused.
Measurement idle_wake_ns(int core, int waker_core, double idle_ms, int repetitions);

}  // namespace tandem
