// The runtime interface: how a worker process runs its segments, chosen by the worker plan's `runtime` field.
#pragma once

#include <cstdint>
#include <vector>

#include "contract/deployment.h"
#include "contract/shm_layout.h"
#include "segment.h"

namespace tandem {

// Longest a blocked worker sleeps without a wake-up: bounds a lost wake-up and keeps its heartbeat going.
inline constexpr uint32_t kIdleTimeoutUs = 5000;

struct WorkerRuntime {
  // Runs `segments` until the manager sets stop; `worker` is the process's slot in the stats zone.
  void (*run)(std::vector<SegmentRuntime>& segments, StatsZone& stats, int worker, uint16_t burst);
  // Whether this worker ran the segment's NFs (their reports come from the process that ran them).
  bool (*ran)(const SegmentRuntime& segment, const StatsZone& stats, int worker);
};

// The runtime of a worker process: one line per runtime in runtimes.cc. Runtime::External has none (the
// manager starts the application itself); asking for it throws std::invalid_argument.
const WorkerRuntime& worker_runtime(Runtime runtime);

}  // namespace tandem
