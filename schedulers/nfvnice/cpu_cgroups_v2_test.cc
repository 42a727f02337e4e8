// Tests of NFVnice's cpu groups on a fake cgroup2 tree (any machine): cpu enabled for the NFs' groups, weights written
// as cpu.weight, the kernel's refusals named, and nothing left behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

#include "cpu_cgroups.h"
#include "cpu_shares.h"
#include "schedulers/mechanisms/fake_cgroup2_test_support.h"

namespace tandem::nfvnice {
namespace {

class CpuCgroupsV2 : public ::testing::Test {
 protected:
  void SetUp() override {
    for (pid_t& child : children_) {
      child = fork();
      if (child == 0) {
        pause();
        _exit(0);
      }
    }
    // What the control plane does for the run (resources.py): +cpu in the root's cgroup.subtree_control, the group.
    ASSERT_EQ(fake_.write(fake_.root() + "/cgroup.subtree_control", "+cpu"), 0);
    ASSERT_EQ(fake_.make_group(run_), 0);
  }
  void TearDown() override {
    for (pid_t child : children_) {
      kill(child, SIGKILL);
      waitpid(child, nullptr, 0);
    }
  }
  std::string message_of(const std::function<void()>& action) {
    try {
      action();
    } catch (const std::runtime_error& error) {
      return error.what();
    }
    return "(no error)";
  }
  FakeCgroup2 fake_;  // a v2-only host: cpuset cpu io memory hugetlb pids offered
  std::string run_ = fake_.root() + "/tandem1";
  CgroupHierarchy v2_{CgroupVersion::V2, fake_.root()};
  pid_t children_[2] = {0, 0};
};

TEST_F(CpuCgroupsV2, WeightsGoToCpuWeightAndReleaseLeavesOnlyTheRunsGroup) {
  std::string a_pid = std::to_string(children_[0]);
  {
    CpuCgroups groups(run_, v2_, fake_);
    EXPECT_STREQ(groups.weight_file(), "cpu.weight");
    EXPECT_EQ(fake_.text(run_ + "/cgroup.subtree_control"), "cpu\n") << "cpu enabled for the NFs' groups";
    size_t a = groups.add("a", children_[0]);
    size_t b = groups.add("b", children_[1]);
    EXPECT_EQ(fake_.text(run_ + "/a/cgroup.procs"), a_pid + "\n");
    EXPECT_EQ(fake_.text(run_ + "/a/cpu.weight"), "100\n") << "the default, as 1024 shares";
    EXPECT_FALSE(groups.set_shares(b, kDefaultShares)) << "a new group has the default; it is not written again";
    EXPECT_TRUE(groups.set_shares(a, 1920));
    EXPECT_TRUE(groups.set_shares(b, 192));
    EXPECT_EQ(fake_.text(run_ + "/a/cpu.weight"), "188\n");
    EXPECT_EQ(fake_.text(run_ + "/b/cpu.weight"), "19\n");
    EXPECT_EQ(groups.shares(a), 1920u) << "NFVnice keeps counting in shares";
    EXPECT_TRUE(groups.set_shares(b, kMinShares));
    EXPECT_EQ(fake_.text(run_ + "/b/cpu.weight"), "1\n") << "v2's floor, not the ERANGE that 0 would be";
    EXPECT_EQ(groups.writes(), 3u);
  }  // the destructor releases
  EXPECT_FALSE(fake_.exists(run_ + "/a"));
  EXPECT_FALSE(fake_.exists(run_ + "/b"));
  EXPECT_TRUE(fake_.exists(run_)) << "the run's group is the control plane's to remove";
  EXPECT_EQ(fake_.text(fake_.root() + "/cgroup.procs"), a_pid + "\n" + std::to_string(children_[1]) + "\n");
}

TEST_F(CpuCgroupsV2, CpuNotEnabledAboveTheRunIsAClearErrorAtTheStart) {
  ASSERT_EQ(fake_.write(fake_.root() + "/cgroup.subtree_control", "-cpu"), 0);
  std::string what = message_of([&] { CpuCgroups groups(run_, v2_, fake_); });
  EXPECT_NE(what.find(run_ + "/cgroup.subtree_control: enabling cpu for the NFs' groups (+cpu): No such file"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("not in the group's cgroup.controllers"), std::string::npos) << what;
}

TEST_F(CpuCgroupsV2, ARefusedMoveIsNamedAndLeavesNoGroup) {
  CpuCgroups groups(run_, v2_, fake_);
  ASSERT_EQ(fake_.make_group(run_ + "/t"), 0);
  ASSERT_EQ(fake_.write(run_ + "/t/cgroup.subtree_control", "+cpu"), 0);
  // A group with controllers enabled below it may hold no process (EBUSY), on v2 only.
  std::string what = message_of([&] { groups.add("t", children_[0]); });
  EXPECT_NE(
      what.find(run_ + "/t/cgroup.procs: moving pid " + std::to_string(children_[0]) + " in: Device or resource busy"),
      std::string::npos)
      << what;
  EXPECT_NE(what.find("cgroup.subtree_control is not empty"), std::string::npos) << what;
  // A process that has exited (ESRCH): named, and its group removed again.
  pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  what = message_of([&] { groups.add("ghost", gone); });
  EXPECT_NE(what.find("No such process"), std::string::npos) << what;
  EXPECT_FALSE(fake_.exists(run_ + "/ghost"));
}

TEST_F(CpuCgroupsV2, AWeightTheKernelRefusesKeepsTheLastOneWritten) {
  CpuCgroups groups(run_, v2_, fake_);
  size_t a = groups.add("a", children_[0]);
  ASSERT_TRUE(groups.set_shares(a, 2048));
  fake_.fail_next("cpu.weight", ERANGE);
  EXPECT_TRUE(groups.set_shares(a, 4096)) << "it tried";
  EXPECT_EQ(groups.shares(a), 2048u) << "what the group really has";
  EXPECT_EQ(fake_.text(run_ + "/a/cpu.weight"), "200\n");
}

}  // namespace
}  // namespace tandem::nfvnice
