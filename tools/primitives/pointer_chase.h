// Memory latency by working-set size and stride (SCC Fig. 3): a chain of pointers through the working set, one
// per `stride` bytes, in a random cyclic order so no prefetcher can guess the next load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "measurement.h"

namespace tandem {

// The order in which the chase visits the `slots` slots: one cycle through all of them, shuffled by `seed`.
// next[i] is the slot after slot i.
std::vector<size_t> random_cycle(size_t slots, uint64_t seed);

// Nanoseconds per dependent load over a working set of `bytes`, one pointer every `stride` bytes (>= 8).
Measurement pointer_chase_ns(size_t bytes, size_t stride, int repetitions);

}  // namespace tandem
