// A SCHED_FIFO priority switch between two busy processes on one core, made from another core: what UNiS pays to
// give the core to another NF, until that NF runs.
#pragma once

#include "measurement.h"

namespace tandem {

// Two processes spin on `core`, each moving a heartbeat in shared memory; from `controller_core`, UNiS's process
// controller (the fifo backend, schedulers/mechanisms) hands the core from one to the other, and the switch-latency
// probe times until the other's heartbeat moves. A sample is the median of a repetition's rounds, in nanoseconds.
// Unsupported on one core, or where SCHED_FIFO is refused.
Measurement priority_switch_ns(int core, int controller_core, int repetitions);

}  // namespace tandem
