// Live argument changes in a runtime: builds started on a thread off the NF's core, finished ones swapped in between
// two batches, failed ones refused with the running instance kept.
#include "live_args.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "segment.h"

namespace tandem {

namespace {

void run_build(LiveArgs& live, LiveBuild& build) {
  if (live.build_core >= 0) {
    cpu_set_t cores;
    CPU_ZERO(&cores);
    CPU_SET(live.build_core, &cores);
    pthread_setaffinity_np(pthread_self(), sizeof cores, &cores);
  }
  sched_param normal{};
  pthread_setschedparam(pthread_self(), SCHED_OTHER, &normal);  // not the NF's real-time policy, if it has one
  // The control core's generator, sink and scheduler come first: the build takes what they leave (CFS gives nice 19
  // about 1.5 % beside a busy task of nice 0), and the old instance carries the packets for as long as it lasts.
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);
  try {
    build.result = live.build(build.nf, build.generation);
  } catch (const std::exception& e) {
    build.error = e.what();
  }
  build.done.store(true, std::memory_order_release);
}

void finish(SegmentRuntime& segment, StatsZone& stats) {
  LiveArgs& live = *segment.live;
  LiveBuild& build = *live.building;
  build.thread.join();
  NfControl& control = stats.nf_control[segment.nf_indexes[build.nf]];
  if (build.result) {
    live.retired.push_back(std::move(segment.nfs[build.nf]));
    segment.nfs[build.nf] = std::move(build.result);
    live.running[build.nf] = build.generation;
    if (build.nf < segment.cost_estimate.size()) segment.cost_estimate[build.nf] = 0;  // new arguments, a new cost
    counter_store(control.args_build_cycles, rte_rdtsc() - build.begin_tsc);
    flag_store(control.args_running, build.generation);
  } else {
    live.note_refusal(build.nf, build.generation, build.error);
    flag_store(control.args_refused, build.generation);
  }
  live.building.reset();
  live.rescan = true;  // another NF of the segment may have a new generation waiting
}

}  // namespace

void apply_live_args(SegmentRuntime& segment, StatsZone& stats) {
  LiveArgs& live = *segment.live;
  if (live.building) {
    if (live.building->done.load(std::memory_order_acquire)) finish(segment, stats);
    return;  // meanwhile the running instance carries the packets
  }
  live.rescan = false;
  // Read before the generations: a change raised after this is seen at a later batch.
  live.changes_seen = flag_load(stats.nf_control[segment.nf_indexes.front()].segment_changes);
  live.running.resize(segment.nfs.size(), 0);
  for (size_t k = 0; k < segment.nfs.size(); k++) {
    const NfControl& control = stats.nf_control[segment.nf_indexes[k]];
    uint32_t wanted = flag_load(control.args_wanted);
    if (wanted == live.running[k] || wanted == flag_load(control.args_refused)) continue;
    live.building = std::make_unique<LiveBuild>();
    live.building->nf = k;
    live.building->generation = wanted;
    live.building->begin_tsc = rte_rdtsc();
    live.building->thread = std::thread(run_build, std::ref(live), std::ref(*live.building));
    return;
  }
}

}  // namespace tandem
