// Live argument changes in a runtime: an NF's new arguments built into a new instance beside the running one, on a
// thread of its own off the NF's core, and swapped in between two batches; the old instance carries the packets
// meanwhile, and every packet meets either the old arguments or the new, whole.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "contract/shm_layout.h"
#include "nfs/nf.h"

namespace tandem {

struct SegmentRuntime;

// One build under way: its thread writes `result` or `error`, then raises `done`.
struct LiveBuild {
  size_t nf = 0;  // the NF's place in the segment
  uint32_t generation = 0;
  uint64_t begin_tsc = 0;
  pthread_t thread{};
  std::atomic<bool> raised{false};  // given the default policy: SCHED_IDLE left it nothing (kIdleBuildSeconds)
  std::atomic<bool> done{false};
  std::unique_ptr<NetworkFunction> result;
  std::string error;
};

struct LiveArgs {
  // An instance of the segment's NF k from the arguments of `generation`; throws with the reason it cannot.
  std::function<std::unique_ptr<NetworkFunction>(size_t k, uint32_t generation)> build;
  // Keeps the reason a generation was refused where the manager reads it.
  std::function<void(size_t k, uint32_t generation, const std::string& reason)> note_refusal;
  // Where builds run: the control core, under SCHED_IDLE, in the naps the manager's loop takes while a change is
  // under way (dataplane/run/run_control_loop.cc): a real-time NF that never yields cannot starve its own build, the
  // build takes nothing from the NF's core, and the loop (the generator, the sink) gets the core back the moment it
  // wakes. At nice 19 under the default policy the kernel let a build run a whole tick at a time, the loop stopped
  // meanwhile. -1: wherever the kernel puts it.
  int build_core = -1;
  uint32_t changes_seen = 0;      // the segment head's segment_changes last acted on
  bool rescan = false;            // a build finished: look again for another NF of the segment with a new generation
  std::vector<uint32_t> running;  // per NF of the segment: the generation its instance was built from
  std::unique_ptr<LiveBuild> building;
  // Replaced instances are kept, never destroyed: their DPDK objects (ACL contexts, hash tables) are hugepage memory,
  // whose free is an IPC to the manager (see worker_main.cc); the manager frees them once the NF runs the new
  // generation (dataplane/run/nf_object_reclaim.h), and nothing of theirs runs again.
  std::vector<std::unique_ptr<NetworkFunction>> retired;
  // What each replaced instance had counted (its report, taken at the swap while its objects lived), by the
  // segment's NF k, in the order replaced: the NF's report at the end covers its last instance only.
  std::vector<std::pair<size_t, json>> retired_reports;
};

// Whether the segment has a change to start or to finish: one word a batch while nothing is under way.
inline bool live_args_due(const LiveArgs* live, const StatsZone& stats, int head_nf) {
  return live != nullptr && (live->building != nullptr || live->rescan ||
                             flag_load(stats.nf_control[head_nf].segment_changes) != live->changes_seen);
}

// Swaps in a finished build (or records its refusal), else starts the build of the next NF whose wanted generation
// it does not run; one build at a time. Called between two batches.
void apply_live_args(SegmentRuntime& segment, StatsZone& stats);

}  // namespace tandem
