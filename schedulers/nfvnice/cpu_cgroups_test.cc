// Tests of the per-NF cgroup v1 cpu groups on two real spinning processes: weights take effect, cleanup is complete.
#include "cpu_cgroups.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "cpu_shares.h"
#include "schedulers/mechanisms/cgroup_fs.h"
#include "schedulers/mechanisms/spinners_test_support.h"

namespace tandem::nfvnice {
namespace {

std::string cgroup_of(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/cgroup");
  std::string line;
  while (std::getline(file, line))
    if (line.find(":cpu:") != std::string::npos) return line.substr(line.find(":cpu:") + 5);
  return "";
}

class CpuCgroupsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto mount = cgroup_v1_mount("cpu");
    if (!mount || geteuid() != 0) GTEST_SKIP() << "needs root and the cgroup v1 cpu controller";
    root_ = *mount;
    run_dir_ = root_ + "/tandem-test-" + std::to_string(getpid());
    ASSERT_EQ(mkdir(run_dir_.c_str(), 0755), 0);
  }
  void TearDown() override {
    if (!run_dir_.empty()) EXPECT_EQ(rmdir(run_dir_.c_str()), 0) << "release_all must leave the run's cgroup empty";
  }
  std::string root_, run_dir_;
};

TEST_F(CpuCgroupsTest, SharesDivideTheCoreAndReleaseRestores) {
  Spinners s;
  {
    CpuCgroups groups(run_dir_, root_);
    size_t a = groups.add("a", s.pid(0));
    size_t b = groups.add("b", s.pid(1));
    EXPECT_EQ(cgroup_of(s.pid(0)), "/" + run_dir_.substr(root_.size() + 1) + "/a");
    EXPECT_FALSE(groups.set_shares(b, kDefaultShares)) << "a new group has the default; it is not written again";
    EXPECT_TRUE(groups.set_shares(a, 3000));
    EXPECT_TRUE(groups.set_shares(b, 1000));
    std::ifstream written(groups.dir(a) + "/cpu.shares");
    uint64_t value = 0;
    written >> value;
    EXPECT_EQ(value, 3000u);
    usleep(100000);
    uint64_t a0 = s.count(0), b0 = s.count(1);
    usleep(600000);
    double ratio = static_cast<double>(s.count(0) - a0) / static_cast<double>(s.count(1) - b0);
    EXPECT_GT(ratio, 2.0) << "3:1 shares must give the first spinner about three times the CPU";
    EXPECT_LT(ratio, 4.5);
    std::string dir = groups.dir(a);
    groups.release_all();
    EXPECT_EQ(cgroup_of(s.pid(0)), "/");
    struct stat info;
    EXPECT_NE(stat(dir.c_str(), &info), 0);
  }
}

TEST_F(CpuCgroupsTest, AMissingProcessIsAnErrorAndLeavesNothing) {
  CpuCgroups groups(run_dir_, root_);
  EXPECT_THROW(groups.add("ghost", 999999), std::runtime_error);
  struct stat info;
  EXPECT_NE(stat((run_dir_ + "/ghost").c_str(), &info), 0);
}

}  // namespace
}  // namespace tandem::nfvnice
