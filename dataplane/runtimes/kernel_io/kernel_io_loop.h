// The kernel-I/O runtime: a worker whose NFs take frames from packet sockets, the way NFs on the kernel's
// network stack run (SCC): it processes what its sockets hold and sleeps in poll() while they hold nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "contract/shm_layout.h"
#include "dataplane/runtimes/segment.h"

namespace tandem {

// Runs until `stop` (the worker then counts its sockets: finish_socket_inputs). Every segment's ingress is a
// SocketIngress.
void run_kernel_io_loop(std::vector<SegmentRuntime>& segments, StatsZone& stats, int worker, uint16_t burst);

}  // namespace tandem
