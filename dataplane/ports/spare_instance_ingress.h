// The ingress of a scaled NF's spare instance: the instance sleeps while the autoscaler does not want it.
#pragma once

#include <memory>

#include "contract/deployment.h"
#include "contract/shm_layout.h"
#include "port.h"

namespace tandem {

// Instances 2, 3, ... of a scaled NF are launched with the run but parked: while the autoscaler wants fewer
// instances than its number and no egress spreads flows to it, an empty poll blocks on its worker's futex
// (contract/idle_wait.h) instead of polling again, so a spare takes no CPU from the NFs it shares a core with (under
// CFS a busy poller would take its full share). The manager wakes it when it asks for it, before an egress sends it
// a moved flow; after a scale-in it parks again once its ring is empty. Starting a DPDK secondary at the decision
// would take ~42 ms of EAL attach alone (DESIGN.md), longer than the decision window.
class SpareInstanceIngress final : public IngressPort {
 public:
  SpareInstanceIngress(std::unique_ptr<IngressPort> in, const ScaleControl& control, uint32_t instance,
                       WorkerControl& worker, const StatsZone& stats)
      : in_(std::move(in)), control_(control), instance_(instance), worker_(worker), stats_(stats) {}
  uint16_t rx_burst(rte_mbuf** pkts, uint16_t max) override;
  unsigned waiting() const override { return in_->waiting(); }
  bool parked() const;

 private:
  std::unique_ptr<IngressPort> in_;
  const ScaleControl& control_;
  uint32_t instance_;
  WorkerControl& worker_;
  const StatsZone& stats_;
};

// The longest a parked spare blocks before it looks again (a missed wake costs at most this; the worker's
// heartbeat advances meanwhile, so it is never taken for hung).
inline constexpr uint32_t kSparePark = 20'000;  // microseconds

// The segment's ingress as it should be: parked while spare where the segment's first NF is a spare instance and
// its worker runs nothing else (`alone`: that worker's control; a worker of several segments, rtc's or bubble's,
// must not sleep for one of them: there a spare's empty poll costs only a ring read).
std::unique_ptr<IngressPort> park_while_spare(std::unique_ptr<IngressPort> in, const Deployment& deployment,
                                              const Segment& segment, StatsZone& stats, WorkerControl* alone);

}  // namespace tandem
