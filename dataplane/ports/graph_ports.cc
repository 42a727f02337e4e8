// Choosing and opening a segment's ports from the deployment's graph.
#include "graph_ports.h"

#include <algorithm>
#include <stdexcept>

#include "labelled_egress.h"
#include "parallel_ports.h"
#include "ring_port.h"

namespace tandem {

std::unique_ptr<IngressPort> open_ingress(const std::vector<int>& in_rings, const std::vector<rte_ring*>& rings, StatsZone& stats) {
  if (in_rings.size() == 1) return std::make_unique<RingIngress>(rings.at(in_rings[0]), stats.rings[in_rings[0]]);
  std::vector<std::unique_ptr<IngressPort>> edges;
  for (int ring : in_rings) edges.push_back(std::make_unique<RingIngress>(rings.at(ring), stats.rings[ring]));
  return std::make_unique<JoinIngress>(std::move(edges));
}

std::unique_ptr<EgressPort> open_egress(const Deployment& deployment, const Segment& segment, const std::vector<std::string>& gates,
                                        const std::vector<rte_ring*>& rings, StatsZone& stats) {
  uint64_t& journal = stats.nfs[segment.nfs.front()].mbufs_being_freed;
  const NfConfig& last = deployment.nfs[segment.nfs.back()];
  auto ring_egress = [&](int ring) { return std::make_unique<RingEgress>(rings.at(ring), stats.rings[ring], journal); };
  if (last.forks()) {  // a parallel group: the same packet to every branch
    std::vector<std::unique_ptr<EgressPort>> branches;
    for (int ring : segment.out_rings) branches.push_back(ring_egress(ring));
    return std::make_unique<BranchEgress>(std::move(branches), stats.nfs[last.index].forked);
  }
  if (last.ends_branch)  // the end of a branch: released towards the join by whichever branch finishes last
    return std::make_unique<MarkerEgress>(ring_egress(segment.out_rings.at(0)), stats.nfs[last.index].merged, journal);
  bool labelled = std::any_of(segment.out_rings.begin(), segment.out_rings.end(),
                              [&](int ring) { return !deployment.rings[ring].label.empty(); });
  if (!labelled) {
    if (segment.out_rings.size() != 1) throw std::logic_error("NF " + last.name + " has several unlabelled out-edges but no fork");
    return ring_egress(segment.out_rings[0]);
  }
  std::vector<std::unique_ptr<EgressPort>> by_gate(gates.size());
  for (int ring : segment.out_rings) {
    const std::string& label = deployment.rings[ring].label;
    auto gate = std::find(gates.begin(), gates.end(), label);
    if (gate == gates.end()) throw std::invalid_argument("edge " + deployment.rings[ring].name + ": '" + label + "' is not a gate of NF " + last.name);
    auto& port = by_gate[static_cast<size_t>(gate - gates.begin())];
    if (port) throw std::invalid_argument("NF " + last.name + " has two edges labelled '" + label + "'");
    port = ring_egress(ring);
  }
  return std::make_unique<LabelledEgress>(std::move(by_gate), stats.nfs[last.index].label_miss, journal);
}

}  // namespace tandem
