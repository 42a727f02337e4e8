// Where a chain's latency goes, from its traced packets (run --profile): per NF, the time packets queued for it
// (split into the NF working on other packets and the NF not running at all) and the time inside its batches,
// then the wait for the sink. The parts of each packet add up to its latency exactly: they telescope from the
// generator's send to the sink's receive.
#pragma once

#include <cstdint>
#include <vector>

#include "contract/arg_schema.h"
#include "contract/deployment.h"
#include "contract/hop_trace.h"

namespace tandem {

class LatencyBreakdown {
 public:
  // `nfs`: how many NFs the deployment has (parts are kept by global NF index: the sink adds millions a second).
  explicit LatencyBreakdown(size_t nfs) : nfs_(nfs) {}
  // A traced packet the sink received at `now_tsc`.
  void add(const TraceSlot& slot, uint64_t tx_tsc, uint64_t now_tsc);
  // A traced packet whose slot a later one took before it arrived: its hops are gone.
  void add_lost() { lost_++; }
  // {traced_packets, too_long, lost, untraced_hops, end_to_end_us, exit_queue_us, nfs: [{nf, visits, queue_us,
  // queue_behind_other_work_us, queue_not_running_us, queue_split_unknown, in_nf_us}]}: microseconds per traced
  // packet (an NF a packet did not pass adds 0 to it), so the parts sum to end_to_end_us.
  json to_json(const Deployment& deployment, double tsc_hz) const;

 private:
  // Cycle sums are signed: two cores' clocks may be a few cycles apart, so a wait read across them may be a little
  // below zero; summed signed, the parts still telescope exactly to the end to end and no mean wraps around.
  struct NfPart {
    uint64_t visits = 0, split_unknown = 0;
    int64_t queue = 0, behind_other_work = 0, queue_with_split = 0;
    int64_t in_nf = 0;
  };
  uint64_t traced_ = 0, too_long_ = 0, lost_ = 0, untraced_hops_ = 0;
  int64_t end_to_end_ = 0, exit_queue_ = 0;
  std::vector<NfPart> nfs_;  // by global NF index; an NF no traced packet passed has no visits
};

}  // namespace tandem
