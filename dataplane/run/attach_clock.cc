// A starting worker's attach deadline, pushed on while the process uses CPU.
#include "attach_clock.h"

#include <cstdio>

#include "dataplane/observation/os_counters.h"

namespace tandem {
namespace {

constexpr auto kLookEvery = std::chrono::milliseconds(100);

double seconds(AttachClock::Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// "0.3 s", "12 s": tenths below 10 s.
std::string seconds_text(double s) {
  char text[32];
  snprintf(text, sizeof text, s < 10 ? "%.1f s" : "%.0f s", s);
  return text;
}

std::optional<uint64_t> cpu_ticks_of(pid_t pid) {
  OsSample sample = sample_os_counters(pid);
  if (!sample.user_ticks || !sample.system_ticks) return std::nullopt;
  return *sample.user_ticks + *sample.system_ticks;
}

}  // namespace

AttachClock::AttachClock(pid_t pid, double no_progress_s, double most_s)
    : pid_(pid),
      no_progress_s_(no_progress_s),
      most_s_(most_s),
      launched_(Clock::now()),
      last_look_(launched_),
      last_progress_(launched_),
      cpu_ticks_(cpu_ticks_of(pid)) {}

std::optional<std::string> AttachClock::late(Clock::time_point now) {
  if (now - last_look_ >= kLookEvery) {
    last_look_ = now;
    std::optional<uint64_t> ticks = cpu_ticks_of(pid_);
    // A process whose CPU time cannot be read (gone, about to be reaped) is judged by the wall clock alone.
    if (ticks && (!cpu_ticks_ || *ticks > *cpu_ticks_)) last_progress_ = now;
    if (ticks) cpu_ticks_ = ticks;
  }
  if (seconds(now - launched_) > most_s_)
    return "still not attached " + seconds_text(most_s_) + " after its launch, though it ran";
  if (seconds(now - last_progress_) > no_progress_s_)
    return "used no CPU for " + seconds_text(no_progress_s_) + " (" + seconds_text(seconds(now - launched_)) +
           " after its launch)";
  return std::nullopt;
}

}  // namespace tandem
