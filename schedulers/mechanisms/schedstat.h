// A task's scheduler statistics from /proc/PID/schedstat: time on a CPU, time runnable but waiting, and the
// number of times it was given a CPU (its timeslices).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

namespace tandem {

struct SchedStat {
  uint64_t run_ns = 0;
  uint64_t wait_ns = 0;
  uint64_t timeslices = 0;
};

// Empty where the kernel has no schedstat (CONFIG_SCHED_INFO off) or the task is gone.
inline std::optional<SchedStat> read_schedstat(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/schedstat");
  SchedStat stat;
  if (!(file >> stat.run_ns >> stat.wait_ns >> stat.timeslices)) return std::nullopt;
  return stat;
}

}  // namespace tandem
