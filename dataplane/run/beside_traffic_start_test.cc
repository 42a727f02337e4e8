// Tests of a worker's start beside the traffic: the starved judgement on looks at a task, and on real child
// processes, one blocked (keeps SCHED_IDLE until its time) and one starved by a busy task of its CPU (given the
// normal policy at once).
#include "beside_traffic_start.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace tandem {
namespace {

using std::chrono::milliseconds;

constexpr uint64_t kMs = 1'000'000;

OsSample look(double when_s, uint64_t cpu_ms, char state = 'R') {
  return {.when_s = when_s, .cpu_ns = cpu_ms * kMs, .state = state};
}

TEST(BesideTrafficStart, StarvedIsRunnableAtBothLooksAndGivenAlmostNothingBetween) {
  const OsSample before = look(10.0, 5);
  // Beside another busy task: runnable, ran 1 ms of 300.
  EXPECT_TRUE(starved_between(before, look(10.3, 6)));
  // In the loop's naps: a third of the window.
  EXPECT_FALSE(starved_between(before, look(10.3, 105)));
  // Blocked (a reply, a lock) at either look: not starved, however little it ran.
  EXPECT_FALSE(starved_between(before, look(10.3, 5, 'S')));
  EXPECT_FALSE(starved_between(look(10.0, 5, 'D'), look(10.3, 5)));
  // Just below a tenth of the window is still starved, just above it is not.
  EXPECT_TRUE(starved_between(before, look(10.3, 34)));
  EXPECT_FALSE(starved_between(before, look(10.3, 36)));
  // CPU time that went back (another task under the same pid), or a look without it, judges nothing.
  EXPECT_FALSE(starved_between(before, look(10.3, 1)));
  EXPECT_FALSE(starved_between(before, {.when_s = 10.3, .state = 'R'}));
}

// A child on `cpu` under `policy`, busy or blocked, that never outlives the test.
pid_t child(int cpu, int policy, bool busy) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(30);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
    sched_param none{};
    sched_setscheduler(0, policy, &none);
    if (busy)
      for (volatile uint64_t spin = 0;; spin = spin + 1) {
      }
    pause();
    _exit(0);
  }
  return pid;
}

void wait_for_policy(pid_t pid, int policy) {
  for (int i = 0; i < 500 && sched_getscheduler(pid) != policy; i++) std::this_thread::sleep_for(milliseconds(2));
  ASSERT_EQ(sched_getscheduler(pid), policy);
}

void end(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

TEST(BesideTrafficStart, ABlockedStartKeepsSchedIdleUntilItsTimeThenGetsTheNormalPolicy) {
  pid_t pid = child(0, SCHED_IDLE, false);
  wait_for_policy(pid, SCHED_IDLE);
  BesideTrafficStart start(pid, 0.05, 1.0);
  while (start.ms_since_launch() < 300) {    // six windows of 0.05 s, blocked throughout: not starved
    EXPECT_FALSE(start.late().has_value());  // 0.3 s without CPU is not late: kAttachSeconds is far longer
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_EQ(sched_getscheduler(pid), SCHED_IDLE) << "given the normal policy before its time";
  EXPECT_FALSE(start.normal_given());
  while (start.ms_since_launch() <= 1000) std::this_thread::sleep_for(milliseconds(20));
  EXPECT_FALSE(start.late().has_value());
  EXPECT_EQ(sched_getscheduler(pid), SCHED_OTHER);
  EXPECT_TRUE(start.normal_given());
  end(pid);
}

TEST(BesideTrafficStart, AStartStarvedByABusyTaskOfItsCpuGetsTheNormalPolicy) {
  if (std::optional<uint64_t> own = sample_os_counters(getpid()).cpu_ns; !own || *own == 0)
    GTEST_SKIP() << "this kernel keeps no /proc/PID/schedstat";
  // Both on CPU 0: the busy one of the normal policy leaves the SCHED_IDLE one next to nothing, whatever else runs.
  pid_t busy = child(0, SCHED_OTHER, true);
  pid_t starting = child(0, SCHED_IDLE, true);
  wait_for_policy(starting, SCHED_IDLE);
  BesideTrafficStart start(starting, 0.1, 5.0);
  for (int i = 0; i < 150 && !start.normal_given(); i++) {
    start.late();
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_TRUE(start.normal_given()) << "not found starved in 1.5 s of windows of 0.1 s";
  EXPECT_EQ(sched_getscheduler(starting), SCHED_OTHER);
  EXPECT_LT(start.ms_since_launch(), 5000);  // by its starving, not by the time since launch
  end(starting);
  end(busy);
}

}  // namespace
}  // namespace tandem
