// Two pinned threads: one sleeps on a futex, the other wakes it after an idle spell and times until it runs.
#include "idle_wake.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include "clock.h"
#include "pinning.h"

namespace tandem {

namespace {

long futex(std::atomic<uint32_t>& word, int op, uint32_t value) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), op, value, nullptr, nullptr, 0);
}

// Wake-ups per repetition: about a fifth of a second of idle spells, at least three.
int wakes_for(double idle_ms) { return std::max(3, static_cast<int>(200 / idle_ms)); }

}  // namespace

Measurement idle_wake_ns(int core, int waker_core, double idle_ms, int repetitions) {
  if (core == waker_core) return one_core_only();
  if (!pin_this_thread(waker_core)) return unsupported("core " + std::to_string(waker_core) + ": " + strerror(errno));
  Measurement result;
  const int wakes = wakes_for(idle_ms);
  const timespec idle{.tv_sec = static_cast<time_t>(idle_ms / 1000),
                      .tv_nsec = static_cast<long>((idle_ms - 1000 * static_cast<int>(idle_ms / 1000)) * 1e6)};
  for (int r = 0; r < repetitions; r++) {
    std::atomic<uint32_t> word{0};        // 0: keep sleeping; 1: woken
    std::atomic<uint64_t> running_ns{0};  // when the sleeper ran again; 0: not yet
    std::atomic<int> asleep{0};           // wake-ups the sleeper is ready for
    std::atomic<bool> pinned{true};
    std::thread sleeper([&] {
      pinned = pin_this_thread(core);
      for (int i = 0; i < wakes && pinned; i++) {
        word.store(0);
        asleep.store(i + 1);
        while (word.load() == 0) futex(word, FUTEX_WAIT_PRIVATE, 0);
        running_ns.store(now_ns());
      }
    });
    double total_ns = 0;
    for (int i = 0; i < wakes; i++) {
      while (asleep.load() != i + 1 && pinned) std::this_thread::yield();
      if (!pinned) break;
      nanosleep(&idle, nullptr);  // the sleeper's core is idle all this while
      running_ns.store(0);
      uint64_t called = now_ns();
      word.store(1);
      futex(word, FUTEX_WAKE_PRIVATE, 1);
      uint64_t ran = 0;
      while ((ran = running_ns.load()) == 0) {
      }
      total_ns += static_cast<double>(ran - called);
    }
    sleeper.join();
    if (!pinned) return unsupported("core " + std::to_string(core) + " refused");
    result.samples_ns.push_back(total_ns / wakes);
  }
  return result;
}

}  // namespace tandem
