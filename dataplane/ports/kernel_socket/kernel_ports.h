// A kernel-I/O NF's ports, opened from the deployment inside the NF's network namespace.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <rte_mempool.h>

#include "contract/deployment.h"
#include "contract/shm_layout.h"
#include "dataplane/ports/port.h"

namespace tandem {

// Moves the calling process into the named network namespace (/run/netns/NAME, made by `ip netns add`).
// Throws std::runtime_error naming it.
void enter_network_namespace(const std::string& netns);

// The socket the segment's NF takes its frames from (its in-link), with `pool`'s mbufs as receive buffers.
std::unique_ptr<IngressPort> open_kernel_ingress(const Deployment& deployment, const Segment& segment,
                                                 rte_mempool* pool, StatsZone& stats);

// The socket the segment's NF hands frames on through (its out-link).
std::unique_ptr<EgressPort> open_kernel_egress(const Deployment& deployment, const Segment& segment, StatsZone& stats);

// At a worker's end, whatever its runtime, once it has set its `left_loop`: if any of `inputs` is a packet socket,
// waits (bounded) until the manager says every sender into a kernel link has stopped, then hands each socket's
// final counts to its link's counters. Returns at once for a worker without one.
void finish_socket_inputs(const std::vector<IngressPort*>& inputs, StatsZone& stats);

}  // namespace tandem
