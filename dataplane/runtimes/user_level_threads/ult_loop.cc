// The user-level-thread worker: per-NF threads, batch sizes from shared memory, TSC load windows.
#include "ult_loop.h"

#include <rte_cycles.h>

#include <algorithm>

#include "contract/idle_wait.h"
#include "dataplane/runtimes/runtime.h"
#include "user_level_threads.h"

namespace tandem {

bool hold_nf(NfControl& c, int worker) {
  int32_t holder = flag_load(c.running_on);
  if (flag_load(c.owner) != worker) {
    if (holder == worker) flag_store(c.running_on, int32_t{-1});  // migrated away: let the new owner take it
    return false;
  }
  if (holder == worker) return true;
  int32_t none = -1;
  return holder == -1 &&
         __atomic_compare_exchange_n(&c.running_on, &none, worker, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

namespace {

bool owns_any(const std::vector<SegmentRuntime>& segments, const StatsZone& stats, int worker) {
  for (const SegmentRuntime& segment : segments)
    if (flag_load(stats.nf_control[segment.nf_indexes.front()].owner) == worker) return true;
  return false;
}

}  // namespace

void run_ult_loop(std::vector<SegmentRuntime>& segments, StatsZone& stats, int worker, uint16_t) {
  WorkerControl& control = stats.workers[worker];
  // The run's end, or this worker's alone (a service re-laid out its NFs in other workers).
  auto leaving = [&] { return flag_load(stats.stop) != 0 || flag_load(control.leave) != 0; };
  UserLevelThreads threads;
  for (SegmentRuntime& segment : segments) {
    threads.spawn([&segment, &stats, &control, &leaving, worker](UserLevelThreads::Yield& yield) {
      const int nf = segment.nf_indexes.front();
      NfControl& nf_control = stats.nf_control[nf];
      NfCounters& counters = stats.nfs[nf];
      while (!leaving()) {
        if (hold_nf(nf_control, worker)) {
          // The batch size is the NF's share of the core; the dequeue never waits for more than the ring holds.
          uint16_t batch = static_cast<uint16_t>(std::clamp<uint32_t>(flag_load(nf_control.batch_size), 1, kMaxBurst));
          uint64_t start = rte_rdtsc();
          uint16_t received = run_segment_once(segment, stats, batch);
          if (flag_load(control.load_window)) {
            // Bubble's nflib: receive-to-send cycles of batches that had packets; empty polls are not load.
            uint64_t spent = rte_rdtsc() - start;
            counter_add(counters.poll_cycles, spent);
            if (received > 0) counter_add(counters.load_cycles, spent);
          }
        }
        yield();
      }
    });
  }
  while (threads.run_round()) {
    counter_add(control.heartbeat, uint64_t{1});
    if (!owns_any(segments, stats, worker))
      idle_wait(
          control, [&] { return !owns_any(segments, stats, worker) && !leaving(); }, kIdleTimeoutUs);
  }
}

bool ult_loop_ran(const SegmentRuntime& segment, const StatsZone& stats, int worker) {
  return flag_load(stats.nf_control[segment.nf_indexes.front()].running_on) == worker;
}

}  // namespace tandem
