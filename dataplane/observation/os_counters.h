// Per-process OS scheduling counters read from /proc: context switches, CPU time, run-queue wait, migrations.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "contract/arg_schema.h"

namespace tandem {

struct OsSample {
  double when_s = 0;                             // monotonic seconds
  std::optional<uint64_t> voluntary_switches;    // /proc/PID/status voluntary_ctxt_switches
  std::optional<uint64_t> involuntary_switches;  // /proc/PID/status nonvoluntary_ctxt_switches
  std::optional<uint64_t> cpu_ns;                // /proc/PID/schedstat, time on a CPU
  std::optional<uint64_t> wait_ns;               // /proc/PID/schedstat, time runnable but waiting
  std::optional<uint64_t> migrations;            // /proc/PID/sched se.nr_migrations
  // /proc/PID/stat utime and stime, in clock ticks: the CPU time in user space and in the kernel (SCC's Table 4 split;
  // a kernel-I/O NF spends most of its time in system calls).
  std::optional<uint64_t> user_ticks;
  std::optional<uint64_t> system_ticks;
  char state = '?';  // /proc/PID/stat state letter
};

OsSample sample_os_counters(pid_t pid);

// Rates per second between two samples: {voluntary_switches_per_s, ..., cpu_share, unavailable: [...]}.
// A counter this kernel does not expose is listed under "unavailable", never reported as zero.
json os_rates(const OsSample& begin, const OsSample& end);

}  // namespace tandem
