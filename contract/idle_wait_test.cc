// Tests of the futex handshake between a blocked worker and the manager, across two real processes.
#include "idle_wait.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>

namespace tandem {
namespace {

using Clock = std::chrono::steady_clock;

struct Shared {
  WorkerControl control;
  uint32_t slept;
  int64_t woke_ns;  // steady_clock (CLOCK_MONOTONIC, one clock for both processes) when idle_wait returned
};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

TEST(IdleWait, ManagerWakesASleepingWorkerInAnotherProcess) {
  auto* shared =
      static_cast<Shared*>(mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(shared, MAP_FAILED);
  *shared = {};
  pid_t child = fork();
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    shared->slept = idle_wait(
                        shared->control, [] { return true; }, 5'000'000)
                        ? 1
                        : 0;
    shared->woke_ns = now_ns();
    _exit(0);
  }
  auto deadline = Clock::now() + std::chrono::seconds(2);
  while (!idle_sleeping(shared->control) && Clock::now() < deadline) usleep(100);
  ASSERT_TRUE(idle_sleeping(shared->control)) << "the worker announces its sleep";
  usleep(20000);  // let it reach the futex
  int64_t waking_ns = now_ns();
  idle_wake(shared->control);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(shared->slept, 1u);
  // It slept until the wake (not a moment less), and the wake ended it, not its 5 s timeout: a wake-up that takes
  // half the timeout would be a lost wake on any host.
  EXPECT_GE(shared->woke_ns, waking_ns) << "returned before it was woken";
  EXPECT_LT(shared->woke_ns - waking_ns, 2'500'000'000) << "woken, not timed out (timeout 5 s)";
  EXPECT_FALSE(idle_sleeping(shared->control));
  EXPECT_EQ(shared->control.sleeps, 1u);
  munmap(shared, sizeof(Shared));
}

TEST(IdleWait, WorkThatArrivedMeanwhileCancelsTheSleep) {
  WorkerControl control{};
  EXPECT_FALSE(idle_wait(
      control, [] { return false; }, 1'000'000));
  EXPECT_FALSE(idle_sleeping(control));
  EXPECT_EQ(control.sleeps, 0u);
}

// The futex's timeout never fires early; a late wake-up (a busy host) only adds, so the shortest of 5 sleeps is the
// timeout itself: within 1.5x of it, where a sleep twice as long as asked fails.
TEST(IdleWait, TimeoutBoundsTheSleep) {
  WorkerControl control{};
  double shortest_ms = 1e9;
  for (int i = 0; i < 5; i++) {
    auto start = Clock::now();
    EXPECT_TRUE(idle_wait(
        control, [] { return true; }, 20'000));
    shortest_ms = std::min(shortest_ms, std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  EXPECT_GE(shortest_ms, 19.9);
  EXPECT_LT(shortest_ms, 30);
}

TEST(IdleWait, WakingAnAwakeWorkerDoesNothing) {
  WorkerControl control{};
  idle_wake(control);
  EXPECT_FALSE(idle_sleeping(control));
}

}  // namespace
}  // namespace tandem
