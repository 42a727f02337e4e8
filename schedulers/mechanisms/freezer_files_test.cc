// Tests of the freezer backend's cgroup v2 file protocol on a fake cgroup2 tree: what it writes where, that a
// refused write is named and leaves no group behind, and the same through a work queue.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup_work_queue.h"
#include "fake_cgroup2_test_support.h"
#include "process_controller.h"

namespace tandem {
namespace {

class FreezerFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    child_ = fork();
    if (child_ == 0) {
      pause();
      _exit(0);
    }
    ASSERT_EQ(fake_.make_group(run_), 0);  // what the control plane makes for the run (cgroup_v2_dir)
  }
  void TearDown() override {
    kill(child_, SIGKILL);
    waitpid(child_, nullptr, 0);
  }
  FakeCgroup2 fake_{"hugetlb"};  // this VM's v2 tree: no controller to enable, cgroup.freeze is a core file
  std::string run_ = fake_.root() + "/tandem1";
  pid_t child_ = 0;
};

TEST_F(FreezerFiles, EachTaskInItsOwnGroupFrozenUntilActivatedAndAllUndoneOnRelease) {
  std::string group = run_ + "/task-" + std::to_string(child_), pid = std::to_string(child_);
  auto controller = make_freezer_controller(run_, fake_.root(), fake_);
  controller->adopt(child_);
  EXPECT_EQ(fake_.text(group + "/cgroup.procs"), pid + "\n");
  EXPECT_EQ(fake_.text(group + "/cgroup.freeze"), "1\n") << "adopted tasks are parked";
  EXPECT_EQ(fake_.text(group + "/cgroup.events"), "populated 1\nfrozen 1\n");
  controller->activate(child_);
  EXPECT_EQ(fake_.text(group + "/cgroup.freeze"), "0\n");
  controller->deactivate(child_);
  EXPECT_EQ(fake_.text(group + "/cgroup.freeze"), "1\n");
  controller->release_all();
  EXPECT_FALSE(fake_.exists(group));
  EXPECT_EQ(fake_.text(fake_.root() + "/cgroup.procs"), pid + "\n") << "back in the root";
  EXPECT_EQ(fake_.writes().back(), fake_.root() + "/cgroup.procs=" + pid);
  EXPECT_EQ(fake_.writes()[fake_.writes().size() - 2], group + "/cgroup.freeze=0") << "thawed before it leaves";
  EXPECT_THROW(controller->activate(child_), std::runtime_error) << "a released task is no longer adopted";
}

TEST_F(FreezerFiles, AGroupThatCannotHoldTheProcessIsNamedAndRemoved) {
  ASSERT_EQ(fake_.make_group(run_ + "/t"), 0);
  ASSERT_EQ(fake_.write(run_ + "/t/cgroup.type", "threaded"), 0);  // the run's group now a thread root
  auto controller = make_freezer_controller(run_, fake_.root(), fake_);
  std::string group = run_ + "/task-" + std::to_string(child_);
  try {
    controller->adopt(child_);
    FAIL() << "adopt into a domain-invalid group must throw";
  } catch (const std::runtime_error& error) {
    std::string what = error.what();
    EXPECT_NE(what.find(group + "/cgroup.procs: moving pid"), std::string::npos) << what;
    EXPECT_NE(what.find("Operation not supported"), std::string::npos) << what;
    EXPECT_NE(what.find("domain invalid"), std::string::npos) << what;
  }
  EXPECT_FALSE(fake_.exists(group)) << "the group made for the task is gone again";
}

TEST_F(FreezerFiles, AWriteTheKernelRefusesIsAnErrorNamingTheFile) {
  auto controller = make_freezer_controller(run_, fake_.root(), fake_);
  controller->adopt(child_);
  fake_.fail_next("cgroup.freeze", EACCES);
  EXPECT_THROW(controller->activate(child_), std::runtime_error);
  fake_.fail_next("cgroup.freeze", ESRCH);  // the task exited: the manager names the NF, the switch is no error
  EXPECT_NO_THROW(controller->activate(child_));
}

// With the run's work queue the groups are made and removed on its thread (the loop does not wait for a move), and
// each task takes the state the module asked last once settle() sees its group.
TEST_F(FreezerFiles, WithAWorkQueueTheGroupIsMadeOnItsThreadAndTheTaskTakesTheStateAskedLast) {
  std::string group = run_ + "/task-" + std::to_string(child_), pid = std::to_string(child_);
  CgroupWorkQueue work(fake_);
  auto controller = make_freezer_controller(run_, fake_.root(), fake_, &work);
  controller->adopt(child_);
  controller->activate(child_);
  controller->deactivate(child_);  // asked before its group may be made: kept for settle()
  work.drain();
  EXPECT_EQ(fake_.text(group + "/cgroup.procs"), pid + "\n");
  EXPECT_NE(fake_.text(group + "/cgroup.freeze"), "1\n") << "the queue does not freeze: the module's state follows";
  controller->settle();
  EXPECT_EQ(fake_.text(group + "/cgroup.freeze"), "1\n");
  controller->activate(child_);  // from now on, one write in the caller's thread
  EXPECT_EQ(fake_.text(group + "/cgroup.freeze"), "0\n");
  controller->deactivate(child_);
  controller->release_all();
  work.drain();
  EXPECT_FALSE(fake_.exists(group));
  EXPECT_EQ(fake_.text(fake_.root() + "/cgroup.procs"), pid + "\n") << "back in the root";
  EXPECT_FALSE(work.has_failures());
}

TEST_F(FreezerFiles, WithAWorkQueueAGroupThatCannotBeMadeIsAFailureOfTheQueueAndTheTaskRunsOn) {
  ASSERT_EQ(fake_.make_group(run_ + "/t"), 0);
  ASSERT_EQ(fake_.write(run_ + "/t/cgroup.type", "threaded"), 0);  // the run's group now a thread root
  CgroupWorkQueue work(fake_);
  auto controller = make_freezer_controller(run_, fake_.root(), fake_, &work);
  std::string group = run_ + "/task-" + std::to_string(child_);
  EXPECT_NO_THROW(controller->adopt(child_));
  work.drain();
  std::vector<std::string> failures = work.take_failures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find(group + "/cgroup.procs: moving pid"), std::string::npos) << failures[0];
  EXPECT_NO_THROW(controller->settle());
  EXPECT_NO_THROW(controller->deactivate(child_)) << "a task without its group cannot be parked: the run warns";
  EXPECT_FALSE(fake_.exists(group));
  controller->release_all();
  work.drain();
  EXPECT_FALSE(work.has_failures());
}

}  // namespace
}  // namespace tandem
