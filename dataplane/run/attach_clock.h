// How long a starting worker may take to attach: judged by its progress (the CPU time it uses), not by the host's
// speed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "contract/run_timing.h"

namespace tandem {

// A worker started on a slow or busy host (an emulated CPU, NFs polling beside it during a re-layout) attaches in
// tens of seconds where ours take ~80 ms, and is not stuck as long as it runs. So a starting process is late only
// when it has used no CPU for `no_progress_s` (blocked for good: a lock never given, a reply that never comes), or
// when it still has not attached after `most_s` (spinning without end).
class AttachClock {
 public:
  using Clock = std::chrono::steady_clock;

  explicit AttachClock(pid_t pid, double no_progress_s = kAttachSeconds, double most_s = kAttachMostSeconds);

  // Why the process is late, or nothing while it may still attach. Reads its CPU time at most every 100 ms.
  std::optional<std::string> late(Clock::time_point now = Clock::now());

  Clock::time_point launched() const { return launched_; }

 private:
  pid_t pid_;
  double no_progress_s_, most_s_;
  Clock::time_point launched_, last_look_, last_progress_;
  std::optional<uint64_t> cpu_ticks_;  // /proc/PID/stat utime + stime at the last look (every thread's)
};

}  // namespace tandem
