// The runtime interface: how a worker process runs its segments, chosen by the worker plan's `runtime` field.
#pragma once

#include <cstdint>
#include <vector>

#include "contract/deployment.h"
#include "contract/shm_layout.h"
#include "segment.h"

namespace tandem {

// Longest a blocked worker sleeps without a wake-up: keeps its heartbeat going (well within the manager's 0.75 s
// hang check) and bounds a lost wake-up, of which the futex handshake (contract/idle_wait.h) leaves none: whoever
// hands a sleeping worker work or a change wakes it. Each timeout is a wake-up too, and on a KVM guest one costs an
// idle core ~25 us of CPU: at 5 ms, timeouts alone kept an idle core 0.5 % busy per sleeping worker.
inline constexpr uint32_t kIdleTimeoutUs = 100000;
// How long a kernel-I/O worker blocks in poll(): it is woken by frames only, and must see `stop` and `leave` soon.
inline constexpr int kKernelPollTimeoutMs = 5;

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
