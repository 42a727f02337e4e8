// Two spinning processes on one core switched by the fifo process controller, timed by the switch-latency probe.
#include "priority_switch.h"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "pinning.h"
#include "schedulers/mechanisms/process_controller.h"
#include "schedulers/mechanisms/switch_latency.h"

namespace tandem {

// Rounds a repetition: a switch and 200 us of the new one running each, a few tens of milliseconds in all. A
// median of them leaves out the round that meets RT throttling's pause (the spinners are real-time while measured).
static constexpr uint32_t kRounds = 41;

Measurement priority_switch_ns(int core, int controller_core, int repetitions) {
  if (core == controller_core) return one_core_only();
  if (auto why = backend_unavailable("fifo")) return unsupported(*why);
  auto* heartbeats = static_cast<uint64_t*>(
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));  // two, a cache line apart
  if (heartbeats == MAP_FAILED) return unsupported(std::string("mmap: ") + strerror(errno));
  cpu_set_t before;
  sched_getaffinity(0, sizeof(before), &before);
  if (!pin_this_process(controller_core)) {
    munmap(heartbeats, 4096);
    return unsupported("core " + std::to_string(controller_core) + ": " + strerror(errno));
  }
  pid_t pids[2] = {0, 0};
  Measurement result;
  for (int i = 0; i < 2; i++) {
    pids[i] = fork();
    if (pids[i] == 0) {  // a spinner: dies with the tool, and after a minute at most
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      alarm(60);
      pin_this_process(core);
      volatile uint64_t* beat = heartbeats + i * 8;
      for (;;) *beat = *beat + 1;
    }
    if (pids[i] < 0) result = unsupported(std::string("fork: ") + strerror(errno));
  }
  for (int r = 0; r < repetitions && result.unsupported.empty(); r++) {
    json probed = measure_switch_latency({"fifo"}, {pids[0], heartbeats}, {pids[1], heartbeats + 8}, "", kRounds);
    const json& fifo = probed["fifo"];
    if (fifo.contains("error")) {
      result = unsupported(fifo["error"].get<std::string>());
    } else if (!fifo.contains("visible_us") || fifo["visible_us"].is_null()) {
      result = unsupported("the other process was never seen running within 50 ms");
    } else {
      result.samples_ns.push_back(fifo["visible_us"]["p50"].get<double>() * 1e3);
    }
  }
  for (pid_t pid : pids)
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  munmap(heartbeats, 4096);
  sched_setaffinity(0, sizeof(before), &before);
  return result;
}

}  // namespace tandem
