// The ports a segment's place in its chain's graph asks for: a ring, a join of rings, a labelled fan-out, a
// parallel group's branch and marker.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <rte_ring.h>

#include "contract/deployment.h"
#include "contract/shm_layout.h"
#include "port.h"

namespace tandem {

// `rings[i]` is ring i of the deployment (the manager made them; a worker looks them up).

// Takes from `in_rings`: one ring, or a join polling each (a node with several in-edges, the sink of a chain
// with several exits).
std::unique_ptr<IngressPort> open_ingress(const std::vector<int>& in_rings, const std::vector<rte_ring*>& rings,
                                          StatsZone& stats);

// Hands on to the segment's out-rings: one ring, a labelled fan-out routing by the gates named `gates` (the
// descriptor of the segment's last NF), a fork's branch port or a branch end's marker (parallel_ports.h). Throws
// std::invalid_argument where the graph and the gates disagree (the control plane's checks refuse such a spec first).
std::unique_ptr<EgressPort> open_egress(const Deployment& deployment, const Segment& segment,
                                        const std::vector<std::string>& gates, const std::vector<rte_ring*>& rings,
                                        StatsZone& stats);

}  // namespace tandem
