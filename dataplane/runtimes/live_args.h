// Live argument changes in a runtime: an NF's new arguments built into a new instance beside the running one and
// swapped in between two batches, so that every packet meets either the old arguments or the new, whole.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "contract/shm_layout.h"
#include "nfs/nf.h"

namespace tandem {

struct SegmentRuntime;

struct LiveArgs {
  // An instance of the segment's NF k from the arguments of `generation`; throws with the reason it cannot.
  std::function<std::unique_ptr<NetworkFunction>(size_t k, uint32_t generation)> build;
  // Keeps the reason a generation was refused where the manager reads it.
  std::function<void(size_t k, uint32_t generation, const std::string& reason)> note_refusal;
  uint32_t changes_seen = 0;      // the segment head's segment_changes last acted on
  std::vector<uint32_t> running;  // per NF of the segment: the generation its instance was built from
  // Replaced instances are kept, not destroyed: their DPDK objects (ACL contexts, hash tables) are hugepage memory,
  // whose free is an IPC to the manager (see worker_main.cc), and nothing of theirs runs again.
  std::vector<std::unique_ptr<NetworkFunction>> retired;
};

// Whether the manager raised a generation for one of the segment's NFs since the last look: one word a batch.
inline bool live_args_pending(const LiveArgs* live, const StatsZone& stats, int head_nf) {
  return live != nullptr && flag_load(stats.nf_control[head_nf].segment_changes) != live->changes_seen;
}

// Builds and swaps in each NF's wanted generation; a build that fails keeps the running instance and says why.
void apply_live_args(SegmentRuntime& segment, StatsZone& stats);

}  // namespace tandem
