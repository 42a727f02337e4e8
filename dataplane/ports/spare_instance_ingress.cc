// A spare instance's ingress: an empty poll blocks on the worker's futex while the autoscaler does not want it.
#include "spare_instance_ingress.h"

#include "contract/idle_wait.h"

namespace tandem {

bool SpareInstanceIngress::parked() const {
  if (flag_load(control_.wanted) >= instance_) return false;
  for (const ScaleFeeder& feeder : control_.feeders)
    if (flag_load(feeder.in_use) >= instance_) return false;
  return true;
}

uint16_t SpareInstanceIngress::rx_burst(rte_mbuf** pkts, uint16_t max) {
  uint16_t n = in_->rx_burst(pkts, max);
  if (n == 0 && parked())
    idle_wait(
        worker_, [&] { return parked() && in_->waiting() == 0 && !flag_load(stats_.stop); }, kSparePark);
  return n;
}

std::unique_ptr<IngressPort> park_while_spare(std::unique_ptr<IngressPort> in, const Deployment& deployment,
                                              const Segment& segment, StatsZone& stats, WorkerControl* alone) {
  const NfConfig& first = deployment.nfs.at(segment.nfs.front());
  if (alone == nullptr || first.scale_group < 0 || first.instance < 2) return in;
  return std::make_unique<SpareInstanceIngress>(std::move(in), stats.scale[first.scale_group],
                                                static_cast<uint32_t>(first.instance), *alone, stats);
}

}  // namespace tandem
