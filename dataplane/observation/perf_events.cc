// perf_event_open counters.
#include "perf_events.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace tandem {
namespace {

constexpr uint64_t cache_event(uint64_t cache, uint64_t op, uint64_t result) {
  return cache | (op << 8) | (result << 16);
}

std::string refusal(int error) {
  // ENOENT, EOPNOTSUPP, ENODEV, EINVAL: no such event on this PMU (a VM without a virtual PMU has no hardware
  // events at all); EACCES, EPERM: perf_event_paranoid or a missing capability.
  std::string text = std::string(strerror(error)) + ", errno " + std::to_string(error);
  if (error == EACCES || error == EPERM)
    return "not permitted (" + text + "; root, or a lower kernel.perf_event_paranoid)";
  return "unsupported on this machine (" + text + ")";
}

}  // namespace

const std::vector<PerfEventSpec>& nf_perf_events() {
  static const std::vector<PerfEventSpec> events = {
      {"context_switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
      {"cpu_migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
      {"page_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
      {"task_clock_ns", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
      {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
      {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
      {"l1d_read_accesses", PERF_TYPE_HW_CACHE,
       cache_event(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS)},
      {"l1d_read_misses", PERF_TYPE_HW_CACHE,
       cache_event(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)},
      {"llc_read_accesses", PERF_TYPE_HW_CACHE,
       cache_event(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS)},
      {"llc_read_misses", PERF_TYPE_HW_CACHE,
       cache_event(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)},
      {"dtlb_read_accesses", PERF_TYPE_HW_CACHE,
       cache_event(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS)},
      {"dtlb_read_misses", PERF_TYPE_HW_CACHE,
       cache_event(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)},
  };
  return events;
}

SyscallsEvent syscalls_event() {
  for (const char* root : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    std::ifstream id_file(std::string(root) + "/events/raw_syscalls/sys_enter/id");
    uint64_t id = 0;
    if (id_file >> id) return {PerfEventSpec{"syscalls", PERF_TYPE_TRACEPOINT, id}, ""};
  }
  return {std::nullopt,
          "unavailable: no tracefs with raw_syscalls:sys_enter (mount -t tracefs nodev /sys/kernel/tracing)"};
}

PerfCounter::PerfCounter(pid_t tid, const PerfEventSpec& spec) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = spec.type;
  attr.config = spec.config;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  attr.exclude_hv = 1;
  fd_ = static_cast<int>(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd_ < 0) refused_because_ = refusal(errno);
}

PerfCounter::PerfCounter(PerfCounter&& other) noexcept
    : fd_(other.fd_), refused_because_(std::move(other.refused_because_)) {
  other.fd_ = -1;
}

PerfCounter::~PerfCounter() {
  if (fd_ >= 0) close(fd_);
}

std::optional<uint64_t> PerfCounter::read() const {
  if (fd_ < 0) return std::nullopt;
  uint64_t values[3] = {};  // value, time enabled, time running
  if (::read(fd_, values, sizeof(values)) != sizeof(values)) return std::nullopt;
  // Multiplexed with other events (more than the PMU has registers): scale by the share of time it counted.
  if (values[2] == 0) return values[1] == 0 ? std::optional<uint64_t>(values[0]) : std::nullopt;
  if (values[2] < values[1]) return static_cast<uint64_t>(static_cast<double>(values[0]) * values[1] / values[2]);
  return values[0];
}

}  // namespace tandem
