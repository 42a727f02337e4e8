// The cache-line round trip between two cores: two pinned threads hand one line back and forth.
#include "core_round_trip.h"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace tandem {
namespace {

using Clock = std::chrono::steady_clock;

bool pin_to(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

struct alignas(64) Ball {
  std::atomic<int> at_there{0};  // 1: the returner's turn; 0: back with the caller
  std::atomic<bool> abandoned{false};
};

// Spins until `ball.at_there` reads `want`; false once the deadline passed or the other side gave up.
bool wait_for(Ball& ball, int want, Clock::time_point deadline) {
  for (unsigned spins = 0; ball.at_there.load(std::memory_order_acquire) != want; spins++) {
    // Reading the clock every spin would be most of what is measured; every 4096 spins costs nothing.
    if ((spins & 4095) == 4095 && (Clock::now() > deadline || ball.abandoned.load(std::memory_order_relaxed))) return false;
  }
  return true;
}

}  // namespace

std::optional<double> cache_line_round_trip_ns(int here, int there, int rounds, int deadline_ms) {
  if (here == there || rounds <= 0) return std::nullopt;
  cpu_set_t saved;
  if (pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) != 0) return std::nullopt;
  Ball ball;
  Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(deadline_ms);
  std::thread returner([&] {
    if (!pin_to(there)) {
      ball.abandoned = true;
      return;
    }
    for (int i = 0; i < rounds; i++) {
      if (!wait_for(ball, 1, deadline)) break;
      ball.at_there.store(0, std::memory_order_release);
    }
  });
  bool finished = pin_to(here);
  Clock::time_point start = Clock::now();
  for (int i = 0; finished && i < rounds; i++) {
    ball.at_there.store(1, std::memory_order_release);
    finished = wait_for(ball, 0, deadline);
  }
  Clock::time_point end = Clock::now();
  ball.abandoned = true;
  returner.join();
  pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
  if (!finished) return std::nullopt;
  return std::chrono::duration<double, std::nano>(end - start).count() / rounds;
}

}  // namespace tandem
