// A spare instance's ingress: an empty poll sleeps while the autoscaler does not want the instance.
#include "spare_instance_ingress.h"

#include <unistd.h>

namespace tandem {

bool SpareInstanceIngress::parked() const {
  if (flag_load(control_.wanted) >= instance_) return false;
  for (const ScaleFeeder& feeder : control_.feeders)
    if (flag_load(feeder.in_use) >= instance_) return false;
  return true;
}

uint16_t SpareInstanceIngress::rx_burst(rte_mbuf** pkts, uint16_t max) {
  uint16_t n = in_->rx_burst(pkts, max);
  if (n == 0 && parked()) usleep(kSparePark);
  return n;
}

std::unique_ptr<IngressPort> park_while_spare(std::unique_ptr<IngressPort> in, const Deployment& deployment, const Segment& segment,
                                              const StatsZone& stats, bool alone_in_worker) {
  const NfConfig& first = deployment.nfs.at(segment.nfs.front());
  if (!alone_in_worker || first.scale_group < 0 || first.instance < 2) return in;
  return std::make_unique<SpareInstanceIngress>(std::move(in), stats.scale[first.scale_group], static_cast<uint32_t>(first.instance));
}

}  // namespace tandem
