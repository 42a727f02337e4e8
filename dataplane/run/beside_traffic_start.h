// A worker starting beside the traffic: its attach judged by AttachClock, and its SCHED_IDLE start ended if it
// leaves the worker no CPU.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "attach_clock.h"

namespace tandem {

// A worker started beside the traffic that has not attached this long after its launch gets the normal policy:
// another busy task of the control core (an Open vSwitch's userspace poller, an application's main thread) leaves a
// SCHED_IDLE task nothing, where the manager's loop naps for it.
inline constexpr double kIdleStartSeconds = 1.0;

class BesideTrafficStart {
 public:
  explicit BesideTrafficStart(pid_t pid, double idle_start_s = kIdleStartSeconds);

  // Why the worker is late (AttachClock::late), or nothing while it may still attach; past `idle_start_s` it is
  // given the normal policy (once).
  std::optional<std::string> late();

  // Milliseconds since its launch.
  double ms_since_launch() const;

 private:
  pid_t pid_;
  double idle_start_s_;
  AttachClock clock_;  // its launch time too
  bool normal_given_ = false;
};

}  // namespace tandem
