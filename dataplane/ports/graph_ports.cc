// Choosing and opening a segment's ports from the deployment's graph.
#include "graph_ports.h"

#include <algorithm>
#include <stdexcept>

#include "labelled_egress.h"
#include "parallel_ports.h"
#include "ring_port.h"
#include "scaled_egress.h"

namespace tandem {

std::unique_ptr<IngressPort> open_ingress(const std::vector<int>& in_rings, const std::vector<rte_ring*>& rings,
                                          StatsZone& stats) {
  if (in_rings.size() == 1) return std::make_unique<RingIngress>(rings.at(in_rings[0]), stats.rings[in_rings[0]]);
  std::vector<std::unique_ptr<IngressPort>> edges;
  for (int ring : in_rings) edges.push_back(std::make_unique<RingIngress>(rings.at(ring), stats.rings[ring]));
  return std::make_unique<JoinIngress>(std::move(edges));
}

std::unique_ptr<EgressPort> open_egress(const Deployment& deployment, const Segment& segment,
                                        const std::vector<std::string>& gates, const std::vector<rte_ring*>& rings,
                                        StatsZone& stats) {
  uint64_t& journal = stats.nfs[segment.nfs.front()].mbufs_being_freed;
  const NfConfig& last = deployment.nfs[segment.nfs.back()];
  auto ring_egress = [&](int ring) { return std::make_unique<RingEgress>(rings.at(ring), stats.rings[ring], journal); };
  // An edge into a scaled NF is a ring to each of its instances, and one port: the scaled egress over them.
  auto scaled_group = [&](int ring) {
    int to = deployment.rings[ring].to;
    return to >= 0 ? deployment.nfs[to].scale_group : -1;
  };
  auto edge_egress = [&](int ring) -> std::unique_ptr<EgressPort> {
    int group = scaled_group(ring);
    if (group < 0) return ring_egress(ring);
    std::vector<ScaledInstance> instances;
    for (int instance : deployment.nfs[group].scale->instances) {
      const NfConfig& nf = deployment.nfs[instance];
      // The instance's ring from this segment; it has one from each instance of the NF before it.
      auto in = std::find_if(nf.in_rings.begin(), nf.in_rings.end(),
                             [&](int r) { return deployment.rings[r].from == last.index; });
      if (in == nf.in_rings.end()) throw std::logic_error("scaled NF " + nf.name + " is not fed by " + last.name);
      std::vector<const RingCounters*> ins, outs;
      for (int r : nf.in_rings) ins.push_back(&stats.rings[r]);
      for (int out : nf.out_rings) outs.push_back(&stats.rings[out]);
      instances.push_back({ring_egress(*in), &stats.rings[*in], std::move(ins), std::move(outs), &stats.nfs[instance]});
    }
    size_t hold = scaled_hold_capacity(deployment, group, last.index);
    std::vector<int> feeders = scale_feeders(deployment, group);
    auto feeder = static_cast<size_t>(std::find(feeders.begin(), feeders.end(), last.index) - feeders.begin());
    return std::make_unique<ScaledEgress>(std::move(instances), stats.scale[group], feeder, journal, hold);
  };
  // The segment's edges: its out-rings, those into one scaled NF's instances counted once.
  std::vector<int> edges;
  std::vector<int> groups_seen;
  for (int ring : segment.out_rings) {
    int group = scaled_group(ring);
    if (group >= 0 && std::find(groups_seen.begin(), groups_seen.end(), group) != groups_seen.end()) continue;
    if (group >= 0) groups_seen.push_back(group);
    edges.push_back(ring);
  }
  if (last.forks()) {  // a parallel group: the same packet to every branch
    std::vector<std::unique_ptr<EgressPort>> branches;
    for (int ring : segment.out_rings) branches.push_back(ring_egress(ring));
    return std::make_unique<BranchEgress>(std::move(branches), stats.nfs[last.index].forked);
  }
  if (last.ends_branch)  // the end of a branch: released towards the join by whichever branch finishes last
    return std::make_unique<MarkerEgress>(ring_egress(segment.out_rings.at(0)), stats.nfs[last.index].merged, journal);
  bool labelled =
      std::any_of(edges.begin(), edges.end(), [&](int ring) { return !deployment.rings[ring].label.empty(); });
  if (!labelled) {
    if (edges.size() != 1) throw std::logic_error("NF " + last.name + " has several unlabelled out-edges but no fork");
    return edge_egress(edges[0]);
  }
  std::vector<std::unique_ptr<EgressPort>> by_gate(gates.size());
  for (int ring : edges) {
    const std::string& label = deployment.rings[ring].label;
    auto gate = std::find(gates.begin(), gates.end(), label);
    if (gate == gates.end())
      throw std::invalid_argument("edge " + deployment.rings[ring].name + ": '" + label + "' is not a gate of NF " +
                                  last.name);
    auto& port = by_gate[static_cast<size_t>(gate - gates.begin())];
    if (port) throw std::invalid_argument("NF " + last.name + " has two edges labelled '" + label + "'");
    port = edge_egress(ring);
  }
  return std::make_unique<LabelledEgress>(std::move(by_gate), stats.nfs[last.index].label_miss, journal);
}

}  // namespace tandem
