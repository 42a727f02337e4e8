// Tests of each process-controller backend on two real spinning processes sharing one core.
#include "process_controller.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "cgroup_fs.h"
#include "spinners_test_support.h"

namespace tandem {
namespace {

void exercise(ProcessController& controller) {
  Spinners s;
  controller.adopt(s.pid(0));
  controller.adopt(s.pid(1));
  controller.activate(s.pid(0));
  usleep(20000);
  EXPECT_EQ(s.progress(), std::make_pair(true, false)) << controller.name() << ": only the activated task runs";
  controller.hand_over(s.pid(0), s.pid(1));
  usleep(20000);
  EXPECT_EQ(s.progress(), std::make_pair(false, true)) << controller.name() << ": the core changed hands";
  controller.release_all();
  usleep(20000);
  EXPECT_EQ(s.progress(), std::make_pair(true, true)) << controller.name() << ": released tasks run again";
  sched_param param{};
  EXPECT_EQ(sched_getscheduler(s.pid(0)), SCHED_OTHER);
  EXPECT_EQ(sched_getparam(s.pid(1), &param), 0);
  EXPECT_EQ(param.sched_priority, 0);
}

TEST(ProcessController, FifoPriorityBackend) {
  if (geteuid() != 0) GTEST_SKIP() << "SCHED_FIFO needs root";
  auto controller = make_process_controller("fifo", "");
  exercise(*controller);
}

// The fifo backend hands over with one call by raising the new task above every priority given so far; after
// more hand-overs than its priority range holds it must bring everyone down and still let only the last one run.
TEST(ProcessController, FifoHandOversOutlastThePriorityRange) {
  if (geteuid() != 0) GTEST_SKIP() << "SCHED_FIFO needs root";
  auto controller = make_process_controller("fifo", "");
  Spinners s;
  controller->adopt(s.pid(0));
  controller->adopt(s.pid(1));
  controller->activate(s.pid(0));
  int running = 0;
  for (int round = 0; round < 301; round++) {
    controller->hand_over(s.pid(running), s.pid(1 - running));
    running = 1 - running;
    sched_param active{}, parked{};
    ASSERT_EQ(sched_getparam(s.pid(running), &active), 0);
    ASSERT_EQ(sched_getparam(s.pid(1 - running), &parked), 0);
    ASSERT_GT(active.sched_priority, parked.sched_priority) << "round " << round;
    ASSERT_LT(active.sched_priority, 99) << "NFs must stay below the kernel's own real-time threads";
  }
  usleep(20000);
  EXPECT_EQ(s.progress(), std::make_pair(false, true)) << "after 301 hand-overs only the last task activated runs";
  controller->release_all();
  EXPECT_EQ(sched_getscheduler(s.pid(0)), SCHED_OTHER);
  EXPECT_EQ(sched_getscheduler(s.pid(1)), SCHED_OTHER);
}

TEST(ProcessController, SignalBackend) {
  auto controller = make_process_controller("signal", "");
  exercise(*controller);
}

TEST(ProcessController, FreezerBackendAndItsCgroupsAreRemoved) {
  if (auto reason = backend_unavailable("freezer")) GTEST_SKIP() << *reason;
  std::string parent = *cgroup_v2_mount() + "/tandem-test-" + std::to_string(getpid());
  ASSERT_EQ(mkdir(parent.c_str(), 0755), 0);
  {
    auto controller = make_process_controller("freezer", parent);
    exercise(*controller);
  }
  EXPECT_EQ(rmdir(parent.c_str()), 0) << "release_all must leave the run's cgroup empty";
}

TEST(ProcessController, UnknownBackendAndMissingCgroupAreErrors) {
  EXPECT_THROW(make_process_controller("nice", ""), std::runtime_error);
  EXPECT_THROW(make_process_controller("freezer", ""), std::runtime_error);
  EXPECT_FALSE(backend_unavailable("fifo").has_value());
  EXPECT_FALSE(backend_unavailable("signal").has_value());
}

}  // namespace
}  // namespace tandem
