// Live argument changes in a runtime: builds started on a thread off the NF's core, finished ones swapped in between
// two batches, failed ones refused with the running instance kept.
#include "live_args.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

#include <rte_cycles.h>

#include "segment.h"

namespace tandem {

namespace {

// How long a build may wait under SCHED_IDLE before it gets the default policy at nice 19: another busy task of the
// control core (an Open vSwitch's userspace poller) leaves a SCHED_IDLE thread nothing, where the manager's loop naps.
constexpr double kIdleBuildSeconds = 1.0;

struct BuildStart {
  LiveArgs* live;
  LiveBuild* build;
};

void* run_build(void* argument) {
  std::unique_ptr<BuildStart> start(static_cast<BuildStart*>(argument));
  LiveBuild& build = *start->build;
  // Where SCHED_IDLE starves it and it is raised to the default policy, the control core's loop still comes first
  // (CFS gives nice 19 about 1.5 % beside a busy task of nice 0).
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);
  // Set here: a thread's attributes take no SCHED_IDLE (glibc's pthread_attr_setschedpolicy refuses it). Raised
  // meanwhile (it waited a second to run at all), it stays under the default policy.
  sched_param none{};
  sched_setscheduler(0, SCHED_IDLE, &none);
  if (build.raised.load()) sched_setscheduler(0, SCHED_OTHER, &none);
  try {
    build.result = start->live->build(build.nf, build.generation);
  } catch (const std::exception& e) {
    build.error = e.what();
  }
  build.done.store(true, std::memory_order_release);
  return nullptr;
}

// The build's thread starts where it runs, under the default policy until it sets its own: created as a copy of the
// NF's thread, it would wait on the NF's core behind a real-time poller that never yields.
void start_build_thread(LiveArgs& live, LiveBuild& build) {
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setinheritsched(&attributes, PTHREAD_EXPLICIT_SCHED);
  pthread_attr_setschedpolicy(&attributes, SCHED_OTHER);
  sched_param none{};
  pthread_attr_setschedparam(&attributes, &none);
  if (live.build_core >= 0) {
    cpu_set_t cores;
    CPU_ZERO(&cores);
    CPU_SET(live.build_core, &cores);
    pthread_attr_setaffinity_np(&attributes, sizeof cores, &cores);
  }
  auto* start = new BuildStart{&live, &build};
  int error = pthread_create(&build.thread, &attributes, run_build, start);
  pthread_attr_destroy(&attributes);
  if (error != 0) {
    delete start;
    throw std::runtime_error(std::string("cannot start the build's thread: ") + strerror(error));
  }
}

void finish(SegmentRuntime& segment, StatsZone& stats) {
  LiveArgs& live = *segment.live;
  LiveBuild& build = *live.building;
  pthread_join(build.thread, nullptr);
  NfControl& control = stats.nf_control[segment.nf_indexes[build.nf]];
  if (build.result) {
    live.retired_reports.emplace_back(build.nf, segment.nfs[build.nf]->report());
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
    LiveBuild& build = *live.building;
    if (build.done.load(std::memory_order_acquire)) return finish(segment, stats);
    if (!build.raised.load() &&
        static_cast<double>(rte_rdtsc() - build.begin_tsc) > kIdleBuildSeconds * rte_get_tsc_hz()) {
      build.raised.store(true);
      sched_param normal{};
      pthread_setschedparam(build.thread, SCHED_OTHER, &normal);
    }
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
    try {
      start_build_thread(live, *live.building);
    } catch (const std::exception& e) {  // refused as a build that failed: the running instance carries on
      live.note_refusal(k, wanted, e.what());
      flag_store(stats.nf_control[segment.nf_indexes[k]].args_refused, wanted);
      live.building.reset();
    }
    return;
  }
}

}  // namespace tandem
