// The start gate on a shared (not process-private) futex: the word is `go` in the stats memzone.
#include "start_gate.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

namespace tandem {

void wait_at_start_gate(StatsZone& stats, uint32_t recheck_us) {
  timespec recheck{.tv_sec = recheck_us / 1000000, .tv_nsec = static_cast<long>(recheck_us % 1000000) * 1000};
  // FUTEX_WAIT sleeps only while `go` is still 0, so a `go` set after our check is never slept through.
  while (!flag_load(stats.go) && !flag_load(stats.stop))
    syscall(SYS_futex, &stats.go, FUTEX_WAIT, 0u, &recheck, nullptr, 0);
}

void wake_start_gate(StatsZone& stats) { syscall(SYS_futex, &stats.go, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0); }

uint32_t wait_while_staged(WorkerControl& slot, StatsZone& stats, uint32_t recheck_us) {
  timespec recheck{.tv_sec = recheck_us / 1000000, .tv_nsec = static_cast<long>(recheck_us % 1000000) * 1000};
  for (;;) {
    if (uint32_t word = flag_load(slot.staged); word != 0) return word;
    if (flag_load(stats.stop)) return kStagedDismissed;
    syscall(SYS_futex, &slot.staged, FUTEX_WAIT, 0u, &recheck, nullptr, 0);
  }
}

void wake_staged(WorkerControl& slot) { syscall(SYS_futex, &slot.staged, FUTEX_WAKE, 1, nullptr, nullptr, 0); }

}  // namespace tandem
