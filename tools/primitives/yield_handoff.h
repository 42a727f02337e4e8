// A sched_yield hand-off between two processes on one core: what a cooperative NF's turn costs the core (coop).
#pragma once

#include "measurement.h"

namespace tandem {

// Two processes pinned to `core` under SCHED_OTHER take turns through a flag in shared memory, each yielding while
// it is not its turn; the time per turn passed, in nanoseconds, averaged over many turns per repetition.
Measurement yield_handoff_ns(int core, int repetitions);

}  // namespace tandem
