// Tests of the start gate: workers in other processes sleep until `go` or `stop`, and are woken by the manager.
#include "start_gate.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <thread>

namespace tandem {
namespace {

using Clock = std::chrono::steady_clock;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

struct Shared {
  StatsZone stats;
  int64_t woke_ns[3];
};

// Three waiting processes, opened by `open` (which sets go or stop); each must return after the wake, long before
// its 10 s recheck, and must have slept meanwhile rather than polled.
void expect_gate_wakes_waiters(void (*open)(StatsZone&)) {
  auto* shared =
      static_cast<Shared*>(mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(shared, MAP_FAILED);
  pid_t children[3];
  for (int i = 0; i < 3; i++) {
    children[i] = fork();
    if (children[i] == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      wait_at_start_gate(shared->stats, 10'000'000);
      shared->woke_ns[i] = now_ns();
      _exit(0);
    }
  }
  usleep(300'000);  // long enough for a poller to wake hundreds of times
  int64_t waking_ns = now_ns();
  open(shared->stats);
  wake_start_gate(shared->stats);
  for (int i = 0; i < 3; i++) {
    int status = 0;
    rusage usage{};
    wait4(children[i], &status, 0, &usage);
    EXPECT_GE(shared->woke_ns[i], waking_ns) << "returned before the gate opened";
    EXPECT_LT(shared->woke_ns[i] - waking_ns, 5'000'000'000) << "woken, not by its 10 s recheck";
    // A sleeper switches out once (or a few times, if it raced the fork's start); a poller every wake-up.
    EXPECT_LT(usage.ru_nvcsw, 10) << "it polled instead of sleeping";
  }
  munmap(shared, sizeof(Shared));
}

TEST(StartGate, GoWakesEveryWaitingWorker) {
  expect_gate_wakes_waiters([](StatsZone& stats) { flag_store(stats.go, 1u); });
}

TEST(StartGate, StopWakesEveryWaitingWorker) {
  expect_gate_wakes_waiters([](StatsZone& stats) { flag_store(stats.stop, 1u); });
}

TEST(StartGate, AnOpenGateDoesNotWait) {
  auto stats = std::make_unique<StatsZone>();
  flag_store(stats->go, 1u);
  auto start = Clock::now();
  wait_at_start_gate(*stats, 10'000'000);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
}

// `stop` set between a worker's check and its sleep comes with no wake the worker can see: the recheck finds it.
TEST(StartGate, StopWithoutAWakeIsSeenAtTheRecheck) {
  auto stats = std::make_unique<StatsZone>();
  std::thread manager([&] {
    usleep(20'000);
    flag_store(stats->stop, 1u);
  });
  wait_at_start_gate(*stats, 50'000);
  manager.join();
  EXPECT_EQ(flag_load(stats->stop), 1u);
}

// A staged worker (a re-layout's, started beside the running ones) sleeps through the open start gate until the
// manager tells its slot alone; another slot's word does not wake it.
TEST(StagedWorker, SleepsUntilItsSlotIsToldToGoOn) {
  auto* shared =
      static_cast<Shared*>(mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(shared, MAP_FAILED);
  flag_store(shared->stats.go, 1u);  // the running layout's gate, long open
  pid_t child = fork();
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    uint32_t word = wait_while_staged(shared->stats.workers[5], shared->stats, 10'000'000);
    shared->woke_ns[0] = now_ns();
    _exit(word == kStagedGoOn ? 0 : 1);
  }
  usleep(100'000);
  flag_store(shared->stats.workers[4].staged, kStagedGoOn);  // another slot's
  wake_staged(shared->stats.workers[4]);
  usleep(200'000);
  int64_t waking_ns = now_ns();
  flag_store(shared->stats.workers[5].staged, kStagedGoOn);
  wake_staged(shared->stats.workers[5]);
  int status = 0;
  rusage usage{};
  wait4(child, &status, 0, &usage);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "it did not see kStagedGoOn";
  EXPECT_GE(shared->woke_ns[0], waking_ns) << "it went on before its own slot was told";
  EXPECT_LT(shared->woke_ns[0] - waking_ns, 5'000'000'000) << "woken, not by its 10 s recheck";
  EXPECT_LT(usage.ru_nvcsw, 10) << "it polled instead of sleeping";
  munmap(shared, sizeof(Shared));
}

// The run's stop ends a staged worker's wait as a dismissal, seen at the recheck without a wake.
TEST(StagedWorker, StopDismissesIt) {
  auto stats = std::make_unique<StatsZone>();
  std::thread manager([&] {
    usleep(20'000);
    flag_store(stats->stop, 1u);
  });
  EXPECT_EQ(wait_while_staged(stats->workers[0], *stats, 50'000), kStagedDismissed);
  manager.join();
}

}  // namespace
}  // namespace tandem
