// A worker starting beside the traffic, given the normal policy when SCHED_IDLE starves it.
#include "beside_traffic_start.h"

#include <chrono>

#include "worker_launcher.h"

namespace tandem {

namespace {

// A look at the task, none where the kernel keeps no scheduler statistics (CONFIG_SCHED_INFO off: /proc/PID/schedstat
// absent or all zeros, where a task that has started ran some time) or the task is gone.
std::optional<OsSample> look_at(pid_t pid) {
  OsSample sample = sample_os_counters(pid);
  if (!sample.cpu_ns || *sample.cpu_ns == 0) return std::nullopt;
  return sample;
}

}  // namespace

bool starved_between(const OsSample& before, const OsSample& after) {
  const double window_s = after.when_s - before.when_s;
  if (window_s <= 0 || !before.cpu_ns || !after.cpu_ns || *after.cpu_ns < *before.cpu_ns) return false;
  if (before.state != 'R' || after.state != 'R') return false;
  return static_cast<double>(*after.cpu_ns - *before.cpu_ns) * 1e-9 < 0.1 * window_s;
}

BesideTrafficStart::BesideTrafficStart(pid_t pid, double starved_window_s, double idle_start_s)
    : pid_(pid),
      starved_window_s_(starved_window_s),
      idle_start_s_(idle_start_s),
      clock_(pid),
      window_start_(clock_.launched()),
      window_begin_(look_at(pid)) {}

void BesideTrafficStart::judge(AttachClock::Clock::time_point now) {
  bool starved = false;
  if (now - window_start_ >= std::chrono::duration<double>(starved_window_s_)) {
    window_start_ = now;
    std::optional<OsSample> look = look_at(pid_);
    starved = window_begin_ && look && starved_between(*window_begin_, *look);
    window_begin_ = look;
  }
  if (starved || now - clock_.launched() > std::chrono::duration<double>(idle_start_s_)) {
    give_normal_policy(pid_);
    normal_given_ = true;
  }
}

std::optional<std::string> BesideTrafficStart::late() {
  auto now = AttachClock::Clock::now();
  if (!normal_given_) judge(now);
  return clock_.late(now);
}

double BesideTrafficStart::ms_since_launch() const {
  return std::chrono::duration<double, std::milli>(AttachClock::Clock::now() - clock_.launched()).count();
}

}  // namespace tandem
