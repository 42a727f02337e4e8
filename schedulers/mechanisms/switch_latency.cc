// Switch-latency probe for the process-controller backends (reported by ./tandem profile).
#include "switch_latency.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "contract/shm_layout.h"
#include "process_controller.h"

namespace tandem {
namespace {

constexpr double kVisibleTimeoutNs = 50e6;

// The steady clock, not the TSC: the probe runs in the manager and in tandem-primitives, which has no EAL to say
// the TSC's rate; a clock read (tens of nanoseconds) is small beside switches of microseconds.
double now_ns() {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

json percentiles_us(std::vector<double> ns) {
  if (ns.empty()) return nullptr;
  std::sort(ns.begin(), ns.end());
  auto at = [&](double q) {
    return ns[std::min(ns.size() - 1, static_cast<size_t>(q * static_cast<double>(ns.size())))] / 1e3;
  };
  return {{"p50", at(0.5)}, {"p90", at(0.9)}, {"max", ns.back() / 1e3}};
}

json probe(const std::string& backend, SwitchProbeTarget a, SwitchProbeTarget b, const std::string& cgroup_dir,
           uint32_t rounds) {
  if (auto reason = backend_unavailable(backend)) return {{"supported", false}, {"reason", *reason}};
  std::unique_ptr<ProcessController> controller = make_process_controller(backend, cgroup_dir);
  std::vector<double> visible, call;
  uint32_t timeouts = 0;
  try {
    controller->adopt(a.pid);
    controller->adopt(b.pid);
    controller->activate(a.pid);
    usleep(2000);
    SwitchProbeTarget running = a, parked = b;
    for (uint32_t round = 0; round < rounds; round++) {
      uint64_t before = counter_read(*parked.heartbeat);
      double start = now_ns();
      controller->hand_over(running.pid, parked.pid);
      double called = now_ns();
      while (counter_read(*parked.heartbeat) == before && now_ns() - start < kVisibleTimeoutNs) {
      }
      double seen = now_ns();
      if (counter_read(*parked.heartbeat) == before)
        timeouts++;
      else
        visible.push_back(seen - start);
      call.push_back(called - start);
      std::swap(running, parked);
      usleep(200);  // let the new one run a little, as a time slice would
    }
  } catch (const std::exception& e) {
    controller->release_all();
    return {{"supported", true}, {"error", e.what()}};
  }
  controller->release_all();
  return {{"supported", true},
          {"rounds", rounds},
          {"visible_us", percentiles_us(visible)},
          {"call_us", percentiles_us(call)},
          {"not_seen_within_50ms", timeouts}};
}

}  // namespace

json measure_switch_latency(const std::vector<std::string>& backends, SwitchProbeTarget a, SwitchProbeTarget b,
                            const std::string& cgroup_dir, uint32_t rounds) {
  json out = json::object();
  for (const std::string& backend : backends) out[backend] = probe(backend, a, b, cgroup_dir, rounds);
  return out;
}

}  // namespace tandem
