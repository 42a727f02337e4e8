// How long the control loop naps for idle work beside the traffic (a worker starting, a build): as long as the
// scheduler module may go without a tick, within bounds, and often enough to leave the idle work a third of the core.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "schedulers/scheduler.h"

namespace tandem {

class IdleWorkNaps {
 public:
  // The longest nap: where the module bounds nothing, the idle work gets this much at a time.
  static constexpr uint64_t kLongestNs = 200'000;
  // The shortest: below it a nap is mostly the two context switches around it, and the idle work gets little.
  static constexpr uint64_t kShortestNs = 10'000;
  // One nap in every `kPeriodsPerNap` of its length (with one in five a build, or a process starting, took twice as
  // long and stalled the loop as much: docs/service.md's live changes).
  static constexpr uint64_t kPeriodsPerNap = 3;

  explicit IdleWorkNaps(double tsc_hz) : tsc_hz_(tsc_hz) {}

  // The nap to take at `now_tsc` for a module that may go `longest_absence_ns` without a tick
  // (Scheduler::kNoAbsenceBound: no bound) and whose next tick is due at `next_tick_tsc` (none: it needs none). A
  // module that bounds its absence is ticked before the nap, so the nap ends as its next tick falls due.
  uint64_t nap_ns(uint64_t now_tsc, std::optional<uint64_t> next_tick_tsc, uint64_t longest_absence_ns) const {
    if (longest_absence_ns == Scheduler::kNoAbsenceBound || !next_tick_tsc) return kLongestNs;
    const uint64_t until_tick = *next_tick_tsc > now_tsc ? *next_tick_tsc - now_tsc : 0;
    const auto until_tick_ns = static_cast<uint64_t>(static_cast<double>(until_tick) * 1e9 / tsc_hz_);
    return std::clamp(std::min(until_tick_ns, longest_absence_ns), kShortestNs, kLongestNs);
  }

  // When the next nap is due after one of `nap_ns` began at `nap_tsc`.
  uint64_t next_nap_tsc(uint64_t nap_tsc, uint64_t nap_ns) const {
    return nap_tsc + static_cast<uint64_t>(static_cast<double>(nap_ns * kPeriodsPerNap) * 1e-9 * tsc_hz_);
  }

 private:
  double tsc_hz_;
};

}  // namespace tandem
