// Tests of looking at a child's end without reaping it (what lets the scheduler module go before the reap) and of
// reaping it then.
#include "worker_launcher.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace tandem {
namespace {

pid_t child_that_sleeps() {
  pid_t pid = fork();
  if (pid == 0) {
    sleep(30);  // killed by the test long before
    _exit(0);
  }
  return pid;
}

// Waits until `pid` has exited, looking only (never reaping); false after 5 s.
bool exits_within_5_s(pid_t pid) {
  for (int i = 0; i < 5000; i++) {
    if (has_exited(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

TEST(WorkerLauncher, ALiveChildHasNotExited) {
  pid_t pid = child_that_sleeps();
  ASSERT_GT(pid, 0);
  EXPECT_FALSE(has_exited(pid));
  EXPECT_FALSE(reap_if_exited(pid).has_value());
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

TEST(WorkerLauncher, LookingAtAnExitedChildLeavesItToBeReapedWithItsStatus) {
  pid_t pid = child_that_sleeps();
  ASSERT_GT(pid, 0);
  kill(pid, SIGKILL);
  ASSERT_TRUE(exits_within_5_s(pid));
  EXPECT_TRUE(has_exited(pid));  // looking twice: still there, still unreaped
  std::optional<int> status = reap_if_exited(pid);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(describe_exit(*status), "killed by signal 9 (SIGKILL)");
  EXPECT_FALSE(has_exited(pid));  // reaped: gone, and no longer a child
}

TEST(WorkerLauncher, NoPidIsNeverExited) {
  EXPECT_FALSE(has_exited(0));  // a forgotten worker's (waitid would look at any child of the group)
  EXPECT_FALSE(has_exited(-1));
}

}  // namespace
}  // namespace tandem
