// The two-thread ping-pong on one cache line.
#include "cache_line.h"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "clock.h"
#include "pinning.h"

namespace tandem {

namespace {

constexpr uint64_t kRounds = 200000;

}  // namespace

Measurement cache_line_transfer_ns(int core_a, int core_b, int repetitions) {
  if (core_a == core_b) return one_core_only();
  Measurement result;
  for (int r = 0; r < repetitions; r++) {
    alignas(64) std::atomic<uint64_t> token{0};
    std::atomic<bool> pinned_b{true};
    // The partner takes odd turns: it waits for an odd value and makes it even.
    std::thread partner([&] {
      pinned_b = pin_this_thread(core_b);
      for (uint64_t turn = 1; turn < 2 * kRounds && pinned_b; turn += 2) {
        while (token.load(std::memory_order_acquire) != turn) {
        }
        token.store(turn + 1, std::memory_order_release);
      }
    });
    if (!pin_this_thread(core_a)) {
      pinned_b = false;
      partner.join();
      return unsupported("core " + std::to_string(core_a) + ": " + strerror(errno));
    }
    uint64_t start = now_ns();
    for (uint64_t turn = 0; turn < 2 * kRounds && pinned_b; turn += 2) {
      while (token.load(std::memory_order_acquire) != turn) {
        if (!pinned_b) break;
      }
      token.store(turn + 1, std::memory_order_release);
    }
    uint64_t spent = now_ns() - start;
    partner.join();
    if (!pinned_b) return unsupported("core " + std::to_string(core_b) + " refused");
    result.samples_ns.push_back(static_cast<double>(spent) / static_cast<double>(2 * kRounds));  // one-way
  }
  return result;
}

}  // namespace tandem
