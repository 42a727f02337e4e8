// The ingress of a scaled NF's spare instance: the instance sleeps while the autoscaler does not want it.
#pragma once

#include <memory>

#include "contract/deployment.h"
#include "contract/shm_layout.h"
#include "port.h"

namespace tandem {

// Instances 2, 3, ... of a scaled NF are launched with the run but parked: while the autoscaler wants fewer
// instances than its number and its egress spreads no flows to it, an empty poll sleeps `kSparePark` instead of
// polling again, so a spare takes no CPU from the NFs it shares a core with (under CFS a busy poller would take
// its full share). It wakes within that time of being wanted, before the egress sends it a moved flow; after a
// scale-in it parks again once its ring is empty. Starting a DPDK secondary at the decision would take ~42 ms of
// EAL attach alone (DESIGN.md), longer than the decision window.
class SpareInstanceIngress final : public IngressPort {
 public:
  SpareInstanceIngress(std::unique_ptr<IngressPort> in, const ScaleControl& control, uint32_t instance)
      : in_(std::move(in)), control_(control), instance_(instance) {}
  uint16_t rx_burst(rte_mbuf** pkts, uint16_t max) override;
  unsigned waiting() const override { return in_->waiting(); }
  bool parked() const;

 private:
  std::unique_ptr<IngressPort> in_;
  const ScaleControl& control_;
  uint32_t instance_;
};

inline constexpr unsigned kSparePark = 500;  // microseconds

// The segment's ingress as it should be: parked while spare where the segment's first NF is a spare instance and
// its worker runs nothing else (a worker of several segments, rtc's or bubble's, must not sleep for one of them:
// there a spare's empty poll costs only a ring read).
std::unique_ptr<IngressPort> park_while_spare(std::unique_ptr<IngressPort> in, const Deployment& deployment, const Segment& segment,
                                              const StatsZone& stats, bool alone_in_worker);

}  // namespace tandem
