// Live argument changes in a runtime: each wanted generation built and swapped in between two batches, or refused
// with the running instance kept.
#include "live_args.h"

#include <rte_cycles.h>

#include "segment.h"

namespace tandem {

void apply_live_args(SegmentRuntime& segment, StatsZone& stats) {
  LiveArgs& live = *segment.live;
  // Read before the generations: a change raised while we build is seen at the next batch.
  live.changes_seen = flag_load(stats.nf_control[segment.nf_indexes.front()].segment_changes);
  live.running.resize(segment.nfs.size(), 0);
  for (size_t k = 0; k < segment.nfs.size(); k++) {
    NfControl& control = stats.nf_control[segment.nf_indexes[k]];
    uint32_t wanted = flag_load(control.args_wanted);
    if (wanted == live.running[k] || wanted == flag_load(control.args_refused)) continue;
    uint64_t begin = rte_rdtsc();
    try {
      std::unique_ptr<NetworkFunction> fresh = live.build(k, wanted);
      live.retired.push_back(std::move(segment.nfs[k]));
      segment.nfs[k] = std::move(fresh);
      live.running[k] = wanted;
      if (k < segment.cost_estimate.size()) segment.cost_estimate[k] = 0;  // new arguments, a new cost per packet
      counter_store(control.args_build_cycles, rte_rdtsc() - begin);
      flag_store(control.args_running, wanted);
    } catch (const std::exception& e) {
      live.note_refusal(k, wanted, e.what());
      flag_store(control.args_refused, wanted);
    }
  }
}

}  // namespace tandem
