// The poll-loop runtime: one process polls its segments in turn; cooperative yields, throttling and idle sleep as its
// hints say.
#pragma once

#include <cstdint>
#include <vector>

#include "contract/shm_layout.h"
#include "dataplane/runtimes/segment.h"

namespace tandem {

// Polls `segments` until the manager sets stop.
void run_poll_loop(std::vector<SegmentRuntime>& segments, StatsZone& stats, int worker, uint16_t burst);

}  // namespace tandem
