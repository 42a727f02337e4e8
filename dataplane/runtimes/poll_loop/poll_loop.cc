// The poll-loop runtime: one process polls its segments in turn, yielding or sleeping as its hints say.
#include "poll_loop.h"

#include <sched.h>

#include "contract/idle_wait.h"
#include "dataplane/runtimes/runtime.h"

namespace tandem {

void run_poll_loop(std::vector<SegmentRuntime>& segments, StatsZone& stats, int worker, uint16_t burst) {
  WorkerControl& control = stats.workers[worker];
  auto inputs_empty = [&segments] {
    for (const SegmentRuntime& segment : segments)
      if (segment.in->waiting() != 0) return false;
    return true;
  };
  uint32_t batches_since_yield = 0;
  // The run's end, or this worker's alone (its chain removed from a service).
  auto leaving = [&] { return flag_load(stats.stop) != 0 || flag_load(control.leave) != 0; };
  while (!leaving()) {
    // Set by the scheduler module before `go`, and again by the one a service switches to while it runs.
    const YieldPolicy policy{flag_load(control.yield.after_batches), flag_load(control.yield.on_empty),
                             flag_load(control.yield.block_on_empty)};
    if (flag_load(control.throttled)) {
      // Backpressure downstream: block rather than spend CPU on packets the chain would drop later.
      idle_wait(
          control, [&] { return flag_load(control.throttled) != 0 && !leaving(); }, kIdleTimeoutUs);
      counter_add(control.heartbeat, uint64_t{1});
      continue;
    }
    bool any_input = false;
    for (SegmentRuntime& segment : segments) {
      if (run_segment_once(segment, stats, burst) == 0) continue;
      any_input = true;
      if (policy.after_batches != 0 && ++batches_since_yield >= policy.after_batches) {
        batches_since_yield = 0;
        sched_yield();
        counter_add(control.yields, uint64_t{1});
      }
    }
    if (!any_input && policy.block_on_empty != 0) {
      idle_wait(
          control, [&] { return inputs_empty() && !leaving(); }, kIdleTimeoutUs);
    } else if (!any_input && policy.on_empty != 0) {
      sched_yield();
      counter_add(control.yields, uint64_t{1});
    }
    counter_add(control.heartbeat, uint64_t{1});
  }
}

}  // namespace tandem
