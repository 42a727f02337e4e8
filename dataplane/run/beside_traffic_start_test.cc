// Tests of a worker's start beside the traffic on a real child process: under SCHED_IDLE until its time to attach
// under it has passed, then under the normal policy.
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

pid_t idle_child() {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(30);  // never outlives the test
    sched_param none{};
    sched_setscheduler(0, SCHED_IDLE, &none);
    pause();
    _exit(0);
  }
  return pid;
}

TEST(BesideTrafficStart, AWorkerKeepsSchedIdleUntilItsTimeThenGetsTheNormalPolicy) {
  pid_t pid = idle_child();
  // The child sets its own policy: wait until it has.
  for (int i = 0; i < 500 && sched_getscheduler(pid) != SCHED_IDLE; i++) std::this_thread::sleep_for(milliseconds(2));
  ASSERT_EQ(sched_getscheduler(pid), SCHED_IDLE);
  BesideTrafficStart start(pid, 0.2);
  EXPECT_FALSE(start.late().has_value());
  EXPECT_EQ(sched_getscheduler(pid), SCHED_IDLE) << "given the normal policy before its time";
  std::this_thread::sleep_for(milliseconds(250));
  EXPECT_FALSE(start.late().has_value());  // 0.25 s without CPU is not late: kAttachSeconds is far longer
  EXPECT_EQ(sched_getscheduler(pid), SCHED_OTHER);
  EXPECT_GE(start.ms_since_launch(), 200);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

}  // namespace
}  // namespace tandem
