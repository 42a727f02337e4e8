// Per-process counters through perf_event_open(2): software events (switches, migrations, faults, task clock),
// hardware ones where the machine has a PMU (cycles, instructions, caches, TLB) and a tracepoint for system calls.
// A counter the kernel refuses is reported as unsupported, with the reason, never as zero.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tandem {

struct PerfEventSpec {
  std::string name;  // e.g. "context_switches", "llc_read_misses"
  uint32_t type;     // PERF_TYPE_*
  uint64_t config;
};

// What the profiler counts per NF process: software, hardware and hardware-cache events. System calls are a
// tracepoint, resolved at run time (syscalls_event).
const std::vector<PerfEventSpec>& nf_perf_events();

// raw_syscalls:sys_enter, or why it cannot be counted here (no tracefs, no such event).
struct SyscallsEvent {
  std::optional<PerfEventSpec> spec;
  std::string unavailable_because;
};
SyscallsEvent syscalls_event();

class PerfCounter {
 public:
  // Counts `spec` for the thread `tid` (0: the caller), on any CPU, from now on.
  PerfCounter(pid_t tid, const PerfEventSpec& spec);
  ~PerfCounter();
  PerfCounter(PerfCounter&& other) noexcept;
  PerfCounter& operator=(PerfCounter&&) = delete;
  PerfCounter(const PerfCounter&) = delete;

  bool counting() const { return fd_ >= 0; }
  // Why the kernel refused: "unsupported on this machine (...)" or "not permitted (...)"; empty when counting.
  const std::string& refused_because() const { return refused_because_; }
  // The count so far, scaled if the kernel multiplexed the counter; nullopt when not counting or unreadable.
  std::optional<uint64_t> read() const;

 private:
  int fd_ = -1;
  std::string refused_because_;
};

}  // namespace tandem
