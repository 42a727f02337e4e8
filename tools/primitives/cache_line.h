// The cost of moving a cache line between two cores (SCC Table 2): two threads, one per core, pass a counter back
// and forth, each waiting for the other's increment.
#pragma once

#include "measurement.h"

namespace tandem {

// Nanoseconds per one-way transfer between `core_a` and `core_b`; unsupported if they are the same or refused.
Measurement cache_line_transfer_ns(int core_a, int core_b, int repetitions);

}  // namespace tandem
