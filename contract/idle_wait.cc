// Blocking and waking workers with a shared (not process-private) futex in the stats memzone.
#include "idle_wait.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

namespace tandem {
namespace {

long futex(uint32_t* word, int op, uint32_t value, const timespec* timeout) {
  // The memzone is a MAP_SHARED hugepage mapping in every process, so the futex must not be FUTEX_PRIVATE.
  return syscall(SYS_futex, word, op, value, timeout, nullptr, 0);
}

}  // namespace

bool idle_wait(WorkerControl& control, const std::function<bool()>& should_sleep, uint32_t timeout_us) {
  __atomic_store_n(&control.idle, 1u, __ATOMIC_SEQ_CST);
  // Dekker-style: the manager publishes work (ring tail) and then reads `idle`; we publish `idle` and then
  // read the work. With sequentially consistent accesses on both sides one of us sees the other.
  if (!should_sleep()) {
    __atomic_store_n(&control.idle, 0u, __ATOMIC_SEQ_CST);
    return false;
  }
  timespec timeout{.tv_sec = timeout_us / 1000000, .tv_nsec = static_cast<long>(timeout_us % 1000000) * 1000};
  futex(&control.idle, FUTEX_WAIT, 1u, &timeout);  // returns at once if the manager already reset the word
  __atomic_store_n(&control.idle, 0u, __ATOMIC_SEQ_CST);
  counter_add(control.sleeps, uint64_t{1});
  return true;
}

void idle_wake(WorkerControl& control) {
  uint32_t expected = 1;
  if (__atomic_compare_exchange_n(&control.idle, &expected, 0u, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
    futex(&control.idle, FUTEX_WAKE, 1, nullptr);
}

}  // namespace tandem
