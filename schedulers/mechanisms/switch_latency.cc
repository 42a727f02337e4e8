// Switch-latency probe for the process-controller backends (reported by ./tandem profile).
#include "switch_latency.h"

#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include <rte_cycles.h>

#include "contract/shm_layout.h"
#include "process_controller.h"

namespace tandem {
namespace {

constexpr double kVisibleTimeoutSeconds = 0.05;

json percentiles_us(std::vector<double> cycles, double hz) {
  if (cycles.empty()) return nullptr;
  std::sort(cycles.begin(), cycles.end());
  auto at = [&](double q) {
    return cycles[std::min(cycles.size() - 1, static_cast<size_t>(q * static_cast<double>(cycles.size())))] / hz * 1e6;
  };
  return {{"p50", at(0.5)}, {"p90", at(0.9)}, {"max", cycles.back() / hz * 1e6}};
}

json probe(const std::string& backend, SwitchProbeTarget a, SwitchProbeTarget b, const std::string& cgroup_dir,
           uint32_t rounds) {
  if (auto reason = backend_unavailable(backend)) return {{"supported", false}, {"reason", *reason}};
  double hz = static_cast<double>(rte_get_tsc_hz());
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
      uint64_t start = rte_get_tsc_cycles();
      controller->hand_over(running.pid, parked.pid);
      uint64_t called = rte_get_tsc_cycles();
      while (counter_read(*parked.heartbeat) == before &&
             static_cast<double>(rte_get_tsc_cycles() - start) < kVisibleTimeoutSeconds * hz) {
      }
      uint64_t seen = rte_get_tsc_cycles();
      if (counter_read(*parked.heartbeat) == before)
        timeouts++;
      else
        visible.push_back(static_cast<double>(seen - start));
      call.push_back(static_cast<double>(called - start));
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
          {"visible_us", percentiles_us(visible, hz)},
          {"call_us", percentiles_us(call, hz)},
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
