// The kernel-I/O worker's loop: bursts while frames are there, poll() while none are.
#include "kernel_io_loop.h"

#include <poll.h>

#include <stdexcept>

#include "dataplane/ports/kernel_socket/socket_ports.h"
#include "dataplane/runtimes/runtime.h"

namespace tandem {

void run_kernel_io_loop(std::vector<SegmentRuntime>& segments, StatsZone& stats, int worker, uint16_t burst) {
  WorkerControl& control = stats.workers[worker];
  std::vector<pollfd> waits;
  for (SegmentRuntime& segment : segments) {
    auto* input = dynamic_cast<SocketIngress*>(segment.in.get());
    if (input == nullptr) throw std::logic_error("the kernel-I/O runtime runs segments whose input is a packet socket");
    waits.push_back({input->fd(), POLLIN, 0});
  }
  while (!flag_load(stats.stop) && !flag_load(control.leave)) {  // leave: its chain was removed from a service
    bool any_input = false;
    for (SegmentRuntime& segment : segments) any_input = run_segment_once(segment, stats, burst) > 0 || any_input;
    if (!any_input) {
      // As an interrupt-driven NF does: the kernel wakes the process when a frame arrives. The timeout bounds
      // how late it sees `stop`, and keeps its heartbeat going.
      poll(waits.data(), waits.size(), kKernelPollTimeoutMs);
      counter_add(control.sleeps, uint64_t{1});
    }
    counter_add(control.heartbeat, uint64_t{1});
  }
}

}  // namespace tandem
