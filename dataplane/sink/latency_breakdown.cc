// Latency breakdown of traced packets.
#include "latency_breakdown.h"

#include <algorithm>

namespace tandem {
namespace {

// From one clock reading to a later one, perhaps taken on another core: signed, a few cycles of skew between cores'
// TSCs below zero rather than a wait of centuries.
int64_t elapsed(uint64_t from, uint64_t to) { return static_cast<int64_t>(to - from); }

}  // namespace

void LatencyBreakdown::add(const TraceSlot& slot, uint64_t tx_tsc, uint64_t now_tsc) {
  if (slot.hops > kMaxTracedHops) {
    too_long_++;
    return;
  }
  traced_++;
  untraced_hops_ += slot.untraced;
  end_to_end_ += elapsed(tx_tsc, now_tsc);
  uint64_t since = tx_tsc;  // where the packet's wait for the next hop began
  for (int h = 0; h < slot.hops; h++) {
    const HopTrace& hop = slot.hop[h];
    if (hop.nf >= nfs_.size()) continue;  // a torn trace (its slot reused mid-write): nothing to add it to
    NfPart& part = nfs_[hop.nf];
    part.visits++;
    int64_t queued = elapsed(since, hop.arrive_tsc);
    part.queue += queued;
    if (hop.busy_while_queued == kBusyUnknown) {
      part.split_unknown++;
    } else {
      // A batch that ended just after the packet arrived may have begun before it was queued: cap at the wait.
      part.behind_other_work += std::min(static_cast<int64_t>(hop.busy_while_queued), std::max<int64_t>(queued, 0));
      part.queue_with_split += queued;
    }
    part.in_nf += elapsed(hop.arrive_tsc, hop.end_tsc);
    since = hop.end_tsc;
  }
  exit_queue_ += elapsed(since, now_tsc);
}

json LatencyBreakdown::to_json(const Deployment& deployment, double tsc_hz) const {
  double per_packet_us = traced_ ? 1e6 / tsc_hz / static_cast<double>(traced_) : 0;
  auto us = [&](int64_t cycles) { return static_cast<double>(cycles) * per_packet_us; };
  json nfs = json::array();
  for (size_t index = 0; index < nfs_.size(); index++) {
    const NfPart& part = nfs_[index];
    if (part.visits == 0) continue;
    nfs.push_back({{"nf", deployment.nfs[index].name},
                   {"visits", part.visits},
                   {"queue_us", us(part.queue)},
                   // Of the wait whose split is known: the NF busy with packets ahead, and the rest, when it did
                   // not run (its CPU elsewhere: another NF, the kernel, or its own idle sleep).
                   {"queue_behind_other_work_us", us(part.behind_other_work)},
                   {"queue_not_running_us", us(part.queue_with_split - part.behind_other_work)},
                   {"queue_split_unknown", part.split_unknown},
                   {"in_nf_us", us(part.in_nf)}});
  }
  return {{"traced_packets", traced_},
          {"too_long", too_long_},
          {"lost", lost_},
          {"untraced_hops", untraced_hops_},
          {"end_to_end_us", us(end_to_end_)},
          {"exit_queue_us", us(exit_queue_)},
          {"nfs", nfs}};
}

}  // namespace tandem
