// A worker starting beside the traffic: its attach judged by AttachClock, and its SCHED_IDLE start ended if it
// leaves the worker no CPU.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "attach_clock.h"
#include "dataplane/observation/os_counters.h"

namespace tandem {

// How often a start's share of the CPU is judged: long enough for the loop's naps (one in three of the loop's time,
// run_control_loop.cc) to show as a share, short enough that a starved start is rescued well before kIdleStartSeconds.
inline constexpr double kStarvedWindowSeconds = 0.3;
// A start not attached this long after its launch gets the normal policy, starved or not: under SCHED_IDLE in the
// loop's naps, a start runs at a third of the core or less (a tenth, in NFVnice's 10 us naps at overload: a
// re-layout's three staged processes then took 4.6 s where 1.2 s with this bound), and the change's requester waits.
inline constexpr double kIdleStartSeconds = 1.0;

// Whether a start was starved between two looks at it (sample_os_counters): runnable at both and given less than a
// tenth of the time between them. Another busy task of the control core (an Open vSwitch's userspace poller, an
// application's main thread) leaves a SCHED_IDLE task next to nothing; the loop's naps alone give it a third. A start
// that is blocked (a reply, a lock) is not runnable, and a policy would not make it go faster. (The time a task waits
// runnable, schedstat's second field, is added only when it next runs: a starved task's shows nothing.)
bool starved_between(const OsSample& before, const OsSample& after);

class BesideTrafficStart {
 public:
  explicit BesideTrafficStart(pid_t pid, double starved_window_s = kStarvedWindowSeconds,
                              double idle_start_s = kIdleStartSeconds);

  // Why the worker is late (AttachClock::late), or nothing while it may still attach. Given the normal policy (once)
  // when found starved over a window, or past `idle_start_s`.
  std::optional<std::string> late();

  // Milliseconds since its launch.
  double ms_since_launch() const;

  // Whether it was given the normal policy.
  bool normal_given() const { return normal_given_; }

 private:
  void judge(AttachClock::Clock::time_point now);

  pid_t pid_;
  double starved_window_s_, idle_start_s_;
  AttachClock clock_;  // its launch time too
  AttachClock::Clock::time_point window_start_;
  std::optional<OsSample> window_begin_;  // none: the kernel keeps no CPU time of it (or the task is gone)
  bool normal_given_ = false;
};

}  // namespace tandem
