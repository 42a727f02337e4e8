// A worker starting beside the traffic, given the normal policy when SCHED_IDLE starves it.
#include "beside_traffic_start.h"

#include <chrono>

#include "worker_launcher.h"

namespace tandem {

BesideTrafficStart::BesideTrafficStart(pid_t pid, double idle_start_s)
    : pid_(pid), idle_start_s_(idle_start_s), clock_(pid) {}

std::optional<std::string> BesideTrafficStart::late() {
  auto now = AttachClock::Clock::now();
  if (!normal_given_ && now - clock_.launched() > std::chrono::duration<double>(idle_start_s_)) {
    give_normal_policy(pid_);
    normal_given_ = true;
  }
  return clock_.late(now);
}

double BesideTrafficStart::ms_since_launch() const {
  return std::chrono::duration<double, std::milli>(AttachClock::Clock::now() - clock_.launched()).count();
}

}  // namespace tandem
