// Tests of the per-NF cpu groups on two real spinning processes, in the hierarchy this machine offers cpu in (v1 or
// v2): weights take effect, cleanup is complete.
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

// The process's group in `hierarchy`: its "N:cpu:/path" line on v1, its "0::/path" line on v2.
std::string cgroup_of(pid_t pid, CgroupVersion hierarchy) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/cgroup");
  std::string key = hierarchy == CgroupVersion::V1 ? ":cpu:" : "0::", line;
  while (std::getline(file, line))
    if (size_t at = line.find(key); at != std::string::npos && (hierarchy == CgroupVersion::V1 || at == 0))
      return line.substr(at + key.size());
  return "";
}

class CpuCgroupsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    std::optional<CgroupHierarchy> hierarchy = cgroup_hierarchy("cpu");
    if (!hierarchy) GTEST_SKIP() << cgroup_hierarchy_missing("cpu");
    hierarchy_ = *hierarchy;
    root_ = hierarchy_.root;
    // v2: as the control plane does for a run, cpu enabled in the root's cgroup.subtree_control, and taken back.
    std::string control = root_ + "/cgroup.subtree_control";
    if (hierarchy_.version == CgroupVersion::V2 && !cgroup_list_has(*kernel_cgroup_files().read(control), "cpu")) {
      ASSERT_EQ(kernel_cgroup_files().write(control, "+cpu"), 0);
      enabled_cpu_ = true;
    }
    run_dir_ = root_ + "/tandem-test-" + std::to_string(getpid());
    ASSERT_EQ(mkdir(run_dir_.c_str(), 0755), 0);
  }
  void TearDown() override {
    if (!run_dir_.empty()) {
      EXPECT_EQ(rmdir(run_dir_.c_str()), 0) << "release_all must leave the run's cgroup empty";
    }
    if (enabled_cpu_) {
      EXPECT_EQ(kernel_cgroup_files().write(root_ + "/cgroup.subtree_control", "-cpu"), 0);
    }
  }
  CgroupHierarchy hierarchy_{CgroupVersion::V1, ""};
  std::string root_, run_dir_;
  bool enabled_cpu_ = false;
};

TEST_F(CpuCgroupsTest, SharesDivideTheCoreAndReleaseRestores) {
  Spinners s;
  {
    CgroupWorkQueue work;
    CpuCgroups groups(run_dir_, hierarchy_, work);
    size_t a = groups.add("a", s.pid(0));
    size_t b = groups.add("b", s.pid(1));
    work.drain();
    EXPECT_EQ(cgroup_of(s.pid(0), hierarchy_.version), "/" + run_dir_.substr(root_.size() + 1) + "/a");
    EXPECT_FALSE(groups.set_shares(b, kDefaultShares)) << "a new group has the default; it is not written again";
    EXPECT_TRUE(groups.set_shares(a, 3000));
    EXPECT_TRUE(groups.set_shares(b, 1000));
    work.drain();
    EXPECT_EQ(groups.shares(a), 3000u);
    std::ifstream written(groups.dir(a) + "/" + groups.weight_file());
    uint64_t value = 0;
    written >> value;
    EXPECT_EQ(value, hierarchy_.version == CgroupVersion::V1 ? 3000u : cpu_weight_of_shares(3000));
    usleep(100000);
    uint64_t a0 = s.count(0), b0 = s.count(1);
    usleep(600000);
    double ratio = static_cast<double>(s.count(0) - a0) / static_cast<double>(s.count(1) - b0);
    EXPECT_GT(ratio, 2.0) << "3:1 shares must give the first spinner about three times the CPU";
    EXPECT_LT(ratio, 4.5);
    std::string dir = groups.dir(a);
    groups.release_all();
    work.drain();
    EXPECT_EQ(cgroup_of(s.pid(0), hierarchy_.version), "/");
    struct stat info;
    EXPECT_NE(stat(dir.c_str(), &info), 0);
  }
}

TEST_F(CpuCgroupsTest, AMissingProcessIsAFailureAndLeavesNothing) {
  CgroupWorkQueue work;
  CpuCgroups groups(run_dir_, hierarchy_, work);
  groups.add("ghost", 999999);
  work.drain();
  std::vector<std::string> failures = work.take_failures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("/ghost/cgroup.procs: moving pid 999999 in"), std::string::npos) << failures[0];
  struct stat info;
  EXPECT_NE(stat((run_dir_ + "/ghost").c_str(), &info), 0);
}

}  // namespace
}  // namespace tandem::nfvnice
