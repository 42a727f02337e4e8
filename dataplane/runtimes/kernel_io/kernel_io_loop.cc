// The kernel-I/O worker's loop: bursts while frames are there, poll() while none are, and the counting at the end.
#include "kernel_io_loop.h"

#include <poll.h>
#include <unistd.h>

#include <stdexcept>

#include <rte_cycles.h>

#include "dataplane/ports/kernel_socket/socket_ports.h"
#include "dataplane/runtimes/runtime.h"

namespace tandem {

namespace {

// How long the worker waits at the end for the manager to say every sender has stopped: past it, the counts are
// taken anyway, and a frame sent later shows as lost on its link (the accounting says so).
constexpr uint64_t kQuietWaitMs = 1000;

}  // namespace

void run_kernel_io_loop(std::vector<SegmentRuntime>& segments, StatsZone& stats, int worker, uint16_t burst) {
  WorkerControl& control = stats.workers[worker];
  std::vector<SocketIngress*> inputs;
  std::vector<pollfd> waits;
  for (SegmentRuntime& segment : segments) {
    auto* input = dynamic_cast<SocketIngress*>(segment.in.get());
    if (input == nullptr) throw std::logic_error("the kernel-I/O runtime runs segments whose input is a packet socket");
    inputs.push_back(input);
    waits.push_back({input->fd(), POLLIN, 0});
  }
  while (!flag_load(stats.stop)) {
    bool any_input = false;
    for (SegmentRuntime& segment : segments) any_input = run_segment_once(segment, stats, burst) > 0 || any_input;
    if (!any_input) {
      // As an interrupt-driven NF does: the kernel wakes the process when a frame arrives. The timeout bounds
      // how late it sees `stop`, and keeps its heartbeat going.
      poll(waits.data(), waits.size(), static_cast<int>(kIdleTimeoutUs / 1000));
      counter_add(control.sleeps, uint64_t{1});
    }
    counter_add(control.heartbeat, uint64_t{1});
  }
  flag_store(control.left_loop, 1u);
  uint64_t deadline = rte_get_tsc_cycles() + rte_get_tsc_hz() / 1000 * kQuietWaitMs;
  while (!flag_load(stats.kernel_links_quiet) && rte_get_tsc_cycles() < deadline) usleep(200);
  for (SocketIngress* input : inputs) input->finish();
}

}  // namespace tandem
