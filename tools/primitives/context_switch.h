// The cost of a context switch under a scheduling policy (SCC Table 2): two processes on one core hand a token
// back and forth through pipes, so each hand-off is a switch; the pipe calls' own cost is measured alone and taken off.
#pragma once

#include <string>

#include "measurement.h"

namespace tandem {

// `policy`: cfs, batch, rr or fifo (real-time priority 1; both processes block in read, so neither can starve the
// core). Nanoseconds per switch; unsupported with the kernel's reason where the policy or the core is refused.
Measurement context_switch_ns(const std::string& policy, int core, int repetitions);

}  // namespace tandem
