// The probe `perf_counters` (run --profile): each NF process's perf_event_open counters over the measurement
// window (switches, migrations, faults, task clock, system calls; cycles, instructions, cache and TLB misses where
// the machine has a PMU), per packet, and its schedstat wait against run time.
#include <rte_cycles.h>

#include <map>

#include "os_counters.h"
#include "perf_events.h"
#include "probe.h"

namespace tandem {
namespace {

// How often the counters are read while traffic runs: the last read closes the window, which ends within this
// of the run's (the probe is not told when the traffic stops; it is polled until then).
constexpr double kReadEverySeconds = 0.05;

class PerfCountersProbe : public Probe {
 public:
  void poll(ProbeView& view, uint64_t now_tsc) override {
    if (first_poll_tsc_ == 0) first_poll_tsc_ = now_tsc;
    if (!opened_) {
      if (now_tsc - first_poll_tsc_ < static_cast<uint64_t>(view.deployment.warmup_s * view.tsc_hz)) return;
      open(view, now_tsc);
      return;
    }
    if (now_tsc >= next_read_tsc_) {
      next_read_tsc_ = now_tsc + static_cast<uint64_t>(kReadEverySeconds * view.tsc_hz);
      read(view, now_tsc);
    }
  }

  json report(const ProbeView& view) const override {
    if (!opened_) return nullptr;
    json workers = json::array();
    for (const Worker& worker : workers_) {
      double seconds = static_cast<double>(last_tsc_ - opened_tsc_) / view.tsc_hz;
      uint64_t packets = worker.packets_last - worker.packets_at_open;
      json counters = json::object(), unsupported = json::object();
      for (size_t e = 0; e < worker.counters.size(); e++) {
        const PerfCounter& counter = worker.counters[e];
        const std::string& name = worker.names[e];
        if (!counter.counting()) {
          unsupported[name] = counter.refused_because();
          continue;
        }
        if (!worker.last[e]) {
          unsupported[name] = "unreadable (its process ended before the window closed)";
          continue;
        }
        uint64_t value = *worker.last[e];
        counters[name] = {
            {"total", value},
            {"per_second", seconds > 0 ? json(static_cast<double>(value) / seconds) : json()},
            {"per_packet", packets ? json(static_cast<double>(value) / static_cast<double>(packets)) : json()}};
      }
      if (!syscalls_unavailable_.empty()) unsupported["syscalls"] = syscalls_unavailable_;
      json entry = {{"worker", view.deployment.workers[worker.index].name},
                    {"seconds", seconds},
                    {"packets", packets},
                    {"counters", counters},
                    {"unsupported", unsupported}};
      // SCC's Wait/RunTime: time runnable but waiting for a CPU against time on one (schedstat).
      if (worker.os_at_open.cpu_ns && worker.os_last.cpu_ns && worker.os_at_open.wait_ns && worker.os_last.wait_ns) {
        uint64_t run = *worker.os_last.cpu_ns - *worker.os_at_open.cpu_ns,
                 wait = *worker.os_last.wait_ns - *worker.os_at_open.wait_ns;
        entry["run_ns"] = run;
        entry["wait_ns"] = wait;
        entry["wait_over_run"] = run ? json(static_cast<double>(wait) / static_cast<double>(run)) : json();
      }
      workers.push_back(entry);
    }
    return {{"window_seconds", static_cast<double>(last_tsc_ - opened_tsc_) / view.tsc_hz}, {"workers", workers}};
  }

 private:
  struct Worker {
    size_t index;
    std::vector<std::string> names;
    std::vector<PerfCounter> counters;
    std::vector<std::optional<uint64_t>> last;
    uint64_t packets_at_open = 0, packets_last = 0;
    OsSample os_at_open, os_last;
  };

  // Packets the worker took in: its segments' first NFs'.
  static uint64_t packets_in(const ProbeView& view, size_t worker) {
    uint64_t packets = 0;
    for (const Segment& segment : view.deployment.workers[worker].segments)
      packets += counter_read(view.stats.nfs[segment.nfs.front()].packets_in);
    return packets;
  }

  void open(ProbeView& view, uint64_t now_tsc) {
    std::vector<PerfEventSpec> events = nf_perf_events();
    SyscallsEvent syscalls = syscalls_event();
    if (syscalls.spec) events.push_back(*syscalls.spec);
    for (size_t w = 0; w < view.worker_pids.size(); w++) {
      pid_t pid = view.worker_pids[w];
      if (pid <= 0) continue;
      Worker worker{.index = w};
      for (const PerfEventSpec& spec : events) {
        worker.names.push_back(spec.name);
        worker.counters.emplace_back(pid, spec);
      }
      worker.last.resize(worker.counters.size());
      worker.packets_at_open = worker.packets_last = packets_in(view, w);
      worker.os_at_open = worker.os_last = sample_os_counters(pid);
      workers_.push_back(std::move(worker));
    }
    syscalls_unavailable_ = syscalls.unavailable_because;
    opened_ = true;
    opened_tsc_ = last_tsc_ = now_tsc;
    next_read_tsc_ = now_tsc;
  }

  void read(ProbeView& view, uint64_t now_tsc) {
    for (Worker& worker : workers_) {
      for (size_t e = 0; e < worker.counters.size(); e++)
        if (std::optional<uint64_t> value = worker.counters[e].read()) worker.last[e] = value;
      worker.packets_last = packets_in(view, worker.index);
      if (pid_t pid = view.worker_pids[worker.index]; pid > 0) worker.os_last = sample_os_counters(pid);
    }
    last_tsc_ = now_tsc;
  }

  bool opened_ = false;
  uint64_t first_poll_tsc_ = 0, opened_tsc_ = 0, last_tsc_ = 0, next_read_tsc_ = 0;
  std::vector<Worker> workers_;
  std::string syscalls_unavailable_;
};

const ProbeRegistration kPerfCounters({
    .name = "perf_counters",
    .help = "each NF process's perf_event_open counters over the measurement window, per packet (run --profile); "
            "a counter this machine lacks is reported as unsupported",
    // raw_syscalls:sys_enter is found through tracefs, which many machines leave unmounted.
    .requirements = MachineRequirements(MachineResource::Tracefs),
    .create = [](const json& /*options*/, double /*tsc_hz*/) -> std::unique_ptr<Probe> {
      return std::make_unique<PerfCountersProbe>();
    },
});

}  // namespace
}  // namespace tandem
