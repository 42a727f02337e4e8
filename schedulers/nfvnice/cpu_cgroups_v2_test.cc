// Tests of NFVnice's cpu groups on a fake cgroup2 tree (any machine): cpu enabled for the NFs' groups, weights written
// as cpu.weight, the kernel's refusals named, and nothing left behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <future>

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
  // The one failure the queue's work since the last call met, or "(no failure)".
  std::string failure() {
    work_.drain();
    std::vector<std::string> failures = work_.take_failures();
    EXPECT_LE(failures.size(), 1u);
    return failures.empty() ? "(no failure)" : failures.front();
  }
  FakeCgroup2 fake_;
  CgroupWorkQueue work_{fake_};  // after the tree it writes, before the groups that post to it  // a v2-only host:
                                 // cpuset cpu io memory hugetlb pids offered
  std::string run_ = fake_.root() + "/tandem1";
  CgroupHierarchy v2_{CgroupVersion::V2, fake_.root()};
  pid_t children_[2] = {0, 0};
};

TEST_F(CpuCgroupsV2, WeightsGoToCpuWeightAndReleaseLeavesOnlyTheRunsGroup) {
  std::string a_pid = std::to_string(children_[0]);
  {
    CpuCgroups groups(run_, v2_, work_);
    EXPECT_STREQ(groups.weight_file(), "cpu.weight");
    size_t a = groups.add("a", children_[0]);
    size_t b = groups.add("b", children_[1]);
    EXPECT_EQ(failure(), "(no failure)");
    EXPECT_EQ(fake_.text(run_ + "/cgroup.subtree_control"), "cpu\n") << "cpu enabled for the NFs' groups";
    EXPECT_EQ(fake_.text(run_ + "/a/cgroup.procs"), a_pid + "\n");
    EXPECT_EQ(fake_.text(run_ + "/a/cpu.weight"), "100\n") << "the default, as 1024 shares";
    EXPECT_FALSE(groups.set_shares(b, kDefaultShares)) << "a new group has the default; it is not written again";
    EXPECT_TRUE(groups.set_shares(a, 1920));
    EXPECT_TRUE(groups.set_shares(b, 192));
    EXPECT_FALSE(groups.set_shares(b, 192)) << "asked already: not asked again while it waits";
    work_.drain();
    EXPECT_EQ(fake_.text(run_ + "/a/cpu.weight"), "188\n");
    EXPECT_EQ(fake_.text(run_ + "/b/cpu.weight"), "19\n");
    EXPECT_EQ(groups.shares(a), 1920u) << "NFVnice keeps counting in shares";
    EXPECT_TRUE(groups.set_shares(b, kMinShares));
    work_.drain();
    EXPECT_EQ(fake_.text(run_ + "/b/cpu.weight"), "1\n") << "v2's floor, not the ERANGE that 0 would be";
    EXPECT_EQ(groups.writes(), 3u);
  }  // the destructor asks for the release
  work_.drain();
  EXPECT_FALSE(fake_.exists(run_ + "/a"));
  EXPECT_FALSE(fake_.exists(run_ + "/b"));
  EXPECT_TRUE(fake_.exists(run_)) << "the run's group is the control plane's to remove";
  EXPECT_EQ(fake_.text(fake_.root() + "/cgroup.procs"), a_pid + "\n" + std::to_string(children_[1]) + "\n");
}

TEST_F(CpuCgroupsV2, CpuNotEnabledAboveTheRunIsAClearFailureOfTheFirstWork) {
  ASSERT_EQ(fake_.write(fake_.root() + "/cgroup.subtree_control", "-cpu"), 0);
  CpuCgroups groups(run_, v2_, work_);
  std::string what = failure();
  EXPECT_NE(what.find(run_ + "/cgroup.subtree_control: enabling cpu for the NFs' groups (+cpu): No such file"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("not in the group's cgroup.controllers"), std::string::npos) << what;
}

TEST_F(CpuCgroupsV2, ARefusedMoveIsNamedAndLeavesNoGroup) {
  CpuCgroups groups(run_, v2_, work_);
  EXPECT_EQ(failure(), "(no failure)");
  ASSERT_EQ(fake_.make_group(run_ + "/t"), 0);
  ASSERT_EQ(fake_.write(run_ + "/t/cgroup.subtree_control", "+cpu"), 0);
  // A group with controllers enabled below it may hold no process (EBUSY), on v2 only.
  groups.add("t", children_[0]);
  std::string what = failure();
  EXPECT_NE(
      what.find(run_ + "/t/cgroup.procs: moving pid " + std::to_string(children_[0]) + " in: Device or resource busy"),
      std::string::npos)
      << what;
  EXPECT_NE(what.find("cgroup.subtree_control is not empty"), std::string::npos) << what;
  // A process that has exited (ESRCH): named, and its group removed again.
  pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  groups.add("ghost", gone);
  what = failure();
  EXPECT_NE(what.find("No such process"), std::string::npos) << what;
  EXPECT_FALSE(fake_.exists(run_ + "/ghost"));
}

TEST_F(CpuCgroupsV2, AWeightTheKernelRefusesKeepsTheLastOneWritten) {
  CpuCgroups groups(run_, v2_, work_);
  size_t a = groups.add("a", children_[0]);
  ASSERT_TRUE(groups.set_shares(a, 2048));
  work_.drain();
  fake_.fail_next("cpu.weight", ERANGE);
  EXPECT_TRUE(groups.set_shares(a, 4096)) << "it tried";
  work_.drain();
  EXPECT_EQ(groups.shares(a), 2048u) << "what the group really has";
  EXPECT_EQ(fake_.text(run_ + "/a/cpu.weight"), "200\n");
  EXPECT_TRUE(groups.set_shares(a, 4096)) << "refused, so asked again";
  work_.drain();
  EXPECT_EQ(groups.shares(a), 4096u);
}

// The fake tree, its moves held until released: a move waiting for the kernel's grace period.
class HeldMoves final : public CgroupFiles {
 public:
  explicit HeldMoves(FakeCgroup2& fake) : fake_(fake) {}
  void release() { released_.set_value(); }
  int make_group(const std::string& dir) override { return fake_.make_group(dir); }
  int remove_group(const std::string& dir) override { return fake_.remove_group(dir); }
  int write(const std::string& file, const std::string& value) override {
    if (file.ends_with("/cgroup.procs")) released_future_.wait();
    return fake_.write(file, value);
  }
  std::optional<std::string> read(const std::string& file) override { return fake_.read(file); }
  int open_for_writes(const std::string& file) override { return fake_.open_for_writes(file); }
  int rewrite(int fd, const std::string& value) override { return fake_.rewrite(fd, value); }
  void close_file(int fd) override { fake_.close_file(fd); }

 private:
  FakeCgroup2& fake_;
  std::promise<void> released_;
  std::shared_future<void> released_future_ = released_.get_future().share();
};

TEST_F(CpuCgroupsV2, AddingAndWeightingNeverWaitForAMoveAndKeepItsOrder) {
  HeldMoves held(fake_);
  CgroupWorkQueue work(held);
  {
    CpuCgroups groups(run_, v2_, work);
    work.drain();                              // the run's group's +cpu
    size_t a = groups.add("a", children_[0]);  // returns while the move waits
    EXPECT_TRUE(groups.set_shares(a, 2048));
    EXPECT_EQ(groups.shares(a), kDefaultShares) << "not written yet: it waits behind the move";
    usleep(20000);
    EXPECT_EQ(work.done(), 1u) << "the +cpu only: the move waits, the weight behind it";
    held.release();
    work.drain();
    EXPECT_EQ(fake_.text(run_ + "/a/cgroup.procs"), std::to_string(children_[0]) + "\n");
    EXPECT_EQ(groups.shares(a), 2048u);
    EXPECT_EQ(fake_.text(run_ + "/a/cpu.weight"), "200\n");
  }
  work.drain();
  EXPECT_FALSE(fake_.exists(run_ + "/a"));
  EXPECT_FALSE(work.has_failures());
}

}  // namespace
}  // namespace tandem::nfvnice
