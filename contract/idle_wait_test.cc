// Tests of the futex handshake between a blocked worker and the manager, across two real processes.
#include "idle_wait.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>

namespace tandem {
namespace {

using Clock = std::chrono::steady_clock;

struct Shared {
  WorkerControl control;
  uint32_t slept;
  double slept_ms;
};

TEST(IdleWait, ManagerWakesASleepingWorkerInAnotherProcess) {
  auto* shared =
      static_cast<Shared*>(mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(shared, MAP_FAILED);
  *shared = {};
  pid_t child = fork();
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    auto start = Clock::now();
    shared->slept = idle_wait(
                        shared->control, [] { return true; }, 5'000'000)
                        ? 1
                        : 0;
    shared->slept_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    _exit(0);
  }
  auto deadline = Clock::now() + std::chrono::seconds(2);
  while (!idle_sleeping(shared->control) && Clock::now() < deadline) usleep(100);
  ASSERT_TRUE(idle_sleeping(shared->control)) << "the worker announces its sleep";
  usleep(20000);  // let it reach the futex
  idle_wake(shared->control);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(shared->slept, 1u);
  EXPECT_LT(shared->slept_ms, 1000) << "woken, not timed out (timeout 5 s)";
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

TEST(IdleWait, TimeoutBoundsTheSleep) {
  WorkerControl control{};
  auto start = Clock::now();
  EXPECT_TRUE(idle_wait(
      control, [] { return true; }, 20'000));
  double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  EXPECT_GE(ms, 15);
  EXPECT_LT(ms, 1000);
}

TEST(IdleWait, WakingAnAwakeWorkerDoesNothing) {
  WorkerControl control{};
  idle_wake(control);
  EXPECT_FALSE(idle_sleeping(control));
}

}  // namespace
}  // namespace tandem
