// Tests of which hierarchy a controller is used through, of what the kernel's cgroup errors are said to mean, and of
// the fake cgroup2 tree against the kernel's own where this machine mounts cgroup v2 and we are root.
#include "cgroup_fs.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "cgroup_files.h"
#include "fake_cgroup2_test_support.h"

namespace tandem {
namespace {

TEST(CgroupHierarchy, AControllerBoundToAV1HierarchyIsUsedThere) {
  FakeCgroup2 v2("hugetlb");  // a hybrid host: cgroup v2 beside v1 hierarchies that hold the rest
  std::string mounts = v2.mounts_file("cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n");
  std::optional<CgroupHierarchy> cpu = cgroup_hierarchy("cpu", mounts);
  ASSERT_TRUE(cpu.has_value());
  EXPECT_EQ(cpu->version, CgroupVersion::V1);
  EXPECT_EQ(cpu->root, "/sys/fs/cgroup/cpu");
  EXPECT_STREQ(cpu->name(), "v1");
  EXPECT_FALSE(cgroup_hierarchy("cpuset", mounts).has_value()) << "neither v1 nor v2 (only hugetlb) has cpuset";
  std::optional<CgroupHierarchy> hugetlb = cgroup_hierarchy("hugetlb", mounts);
  ASSERT_TRUE(hugetlb.has_value());
  EXPECT_EQ(hugetlb->version, CgroupVersion::V2);
}

TEST(CgroupHierarchy, AV2OnlyHostOffersItsControllersInTheRootsCgroupControllers) {
  FakeCgroup2 v2;  // cgroup2 at the fake root, no v1 line at all (Debian 12, Ubuntu 22.04, RHEL 9)
  std::string mounts = v2.mounts_file();
  std::optional<CgroupHierarchy> cpu = cgroup_hierarchy("cpu", mounts);
  ASSERT_TRUE(cpu.has_value());
  EXPECT_EQ(cpu->version, CgroupVersion::V2);
  EXPECT_EQ(cpu->root, v2.root());
  EXPECT_TRUE(cgroup_hierarchy("cpuset", mounts).has_value());
  EXPECT_FALSE(cgroup_hierarchy("cp", mounts).has_value()) << "a name is matched whole, not as a prefix";
}

TEST(CgroupHierarchy, NeitherSaysWhatEachHierarchyLacks) {
  FakeCgroup2 v2("hugetlb");
  std::string mounts = v2.mounts_file("cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n");
  EXPECT_FALSE(cgroup_hierarchy("cpu", mounts).has_value());
  std::string why = cgroup_hierarchy_missing("cpu", mounts);
  EXPECT_NE(why.find("no cgroup v1 hierarchy binds it"), std::string::npos) << why;
  EXPECT_NE(why.find("cgroup v2 at " + v2.root() + " offers only 'hugetlb'"), std::string::npos) << why;
  std::ofstream(mounts) << "proc /proc proc rw 0 0\n";
  EXPECT_NE(cgroup_hierarchy_missing("cpu", mounts).find("cgroup v2 is not mounted"), std::string::npos);
}

TEST(CgroupFailure, SaysWhatTheKernelMeansByItsErrorOnThatFile) {
  std::string busy = cgroup_failure("/g/nf/cgroup.procs", "moving pid 7 in", EBUSY);
  EXPECT_NE(busy.find("/g/nf/cgroup.procs: moving pid 7 in: Device or resource busy"), std::string::npos) << busy;
  EXPECT_NE(busy.find("cgroup.subtree_control is not empty"), std::string::npos) << busy;
  EXPECT_NE(cgroup_failure("/g/cgroup.procs", "x", EOPNOTSUPP).find("threaded"), std::string::npos);
  EXPECT_NE(cgroup_failure("/g/cgroup.subtree_control", "x", ENOENT).find("cgroup.controllers"), std::string::npos);
  EXPECT_NE(cgroup_failure("/g/cpu.weight", "x", ERANGE).find("1 to 10000"), std::string::npos);
  EXPECT_EQ(cgroup_failure("/g/cpu.max", "x", EPERM), "/g/cpu.max: x: Operation not permitted");
}

// A process that sleeps until killed: something to move between groups.
class Sleeper {
 public:
  Sleeper() : pid_(fork()) {
    if (pid_ == 0) {
      pause();
      _exit(0);
    }
  }
  ~Sleeper() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_;
};

pid_t gone_pid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return pid;
}

// The kernel's answers that the NFVnice, freezer and control-plane code meet, asked of `files` on a group `top` made
// under `root`; a controller the root does not offer is `absent`. One line a step, "step: ok", the errno's name or
// what was read, so the fake and the kernel can be compared line by line.
std::string answers(CgroupFiles& files, const std::string& root, const std::string& top, const std::string& absent) {
  std::string out;
  auto say = [&](const std::string& step, int error) {
    out += step + ": " + (error == 0 ? "ok" : strerrorname_np(error)) + "\n";
  };
  auto show = [&](const std::string& step, const std::string& file) {
    std::string text = files.read(file).value_or("(unreadable)");
    for (size_t at = 0; (at = text.find('\n', at)) != std::string::npos;) text.replace(at, 1, "|");
    out += step + ": '" + text + "'\n";
  };
  Sleeper sleeper;
  std::string pid = std::to_string(sleeper.pid());
  say("mkdir", files.make_group(top));
  say("mkdir again", files.make_group(top));
  for (const char* name : {"cgroup.procs", "cgroup.threads", "cgroup.controllers", "cgroup.events"})
    say(std::string("has ") + name, files.read(top + "/" + name) ? 0 : ENOENT);
  show("type", top + "/cgroup.type");
  show("freeze", top + "/cgroup.freeze");
  show("events", top + "/cgroup.events");
  show("subtree_control", top + "/cgroup.subtree_control");
  say("+absent", files.write(top + "/cgroup.subtree_control", "+" + absent));
  say("+unknown", files.write(top + "/cgroup.subtree_control", "+nosuchcontroller"));
  say("move a gone pid", files.write(top + "/cgroup.procs", std::to_string(gone_pid())));
  say("move in", files.write(top + "/cgroup.procs", pid));
  out += std::string("listed: ") + (files.read(top + "/cgroup.procs").value_or("") == pid + "\n" ? "yes" : "no") + "\n";
  say("freeze 2", files.write(top + "/cgroup.freeze", "2"));
  say("freeze 1", files.write(top + "/cgroup.freeze", "1"));
  // The kernel reports the group frozen once its tasks have stopped, a moment after the write.
  for (int wait = 0;
       wait < 100 && files.read(top + "/cgroup.events").value_or("").find("frozen 1") == std::string::npos; wait++)
    usleep(10000);
  show("events frozen", top + "/cgroup.events");
  say("freeze 0", files.write(top + "/cgroup.freeze", "0"));
  say("rmdir holding a process", files.remove_group(top));
  say("back to root", files.write(root + "/cgroup.procs", pid));
  say("mkdir t", files.make_group(top + "/t"));
  say("t threaded", files.write(top + "/t/cgroup.type", "threaded"));
  show("type", top + "/cgroup.type");
  say("mkdir u", files.make_group(top + "/u"));
  show("u type", top + "/u/cgroup.type");
  say("move into u", files.write(top + "/u/cgroup.procs", pid));
  say("move into t", files.write(top + "/t/cgroup.procs", pid));
  say("rmdir holding groups", files.remove_group(top));
  say("back to root", files.write(root + "/cgroup.procs", pid));
  say("rmdir t", files.remove_group(top + "/t"));
  show("u type", top + "/u/cgroup.type");
  say("rmdir u", files.remove_group(top + "/u"));
  say("rmdir", files.remove_group(top));
  return out;
}

TEST(FakeCgroup2, AnswersAsTheKernelDoesToWhatTandemWrites) {
  FakeCgroup2 fake("hugetlb");
  const std::string expected = R"(mkdir: ok
mkdir again: EEXIST
has cgroup.procs: ok
has cgroup.threads: ok
has cgroup.controllers: ok
has cgroup.events: ok
type: 'domain|'
freeze: '0|'
events: 'populated 0|frozen 0|'
subtree_control: ''
+absent: ENOENT
+unknown: EINVAL
move a gone pid: ESRCH
move in: ok
listed: yes
freeze 2: ERANGE
freeze 1: ok
events frozen: 'populated 1|frozen 1|'
freeze 0: ok
rmdir holding a process: EBUSY
back to root: ok
mkdir t: ok
t threaded: ok
type: 'domain threaded|'
mkdir u: ok
u type: 'domain invalid|'
move into u: EOPNOTSUPP
move into t: ok
rmdir holding groups: EBUSY
back to root: ok
rmdir t: ok
u type: 'domain|'
rmdir u: ok
rmdir: ok
)";
  EXPECT_EQ(answers(fake, fake.root(), fake.root() + "/tandem-test", "cpu"), expected);
  // The kernel's, where it can be asked: the same steps on this machine's cgroup v2 tree give the same answers.
  std::optional<std::string> mount = cgroup_v2_mount();
  if (!mount || geteuid() != 0)
    GTEST_SKIP() << "the fake was checked against the kernel's cgroup2 only where it is "
                    "mounted and we are root";
  // A controller this kernel has (enabled in /proc/cgroups) that its cgroup v2 root does not offer: ENOENT to enable.
  std::string offered = kernel_cgroup_files().read(*mount + "/cgroup.controllers").value_or(""), absent;
  std::ifstream controllers("/proc/cgroups");
  for (std::string name, hierarchy, groups, enabled; controllers >> name >> hierarchy >> groups >> enabled;)
    if (absent.empty() && enabled == "1" && !cgroup_list_has(offered, name) &&
        cgroup_list_has("cpuset cpu io memory hugetlb pids rdma misc", name))
      absent = name;
  if (absent.empty()) GTEST_SKIP() << "this host's cgroup v2 offers every controller it has: none to ask ENOENT of";
  std::string top = *mount + "/tandem-fake-check-" + std::to_string(getpid());
  EXPECT_EQ(answers(kernel_cgroup_files(), *mount, top, absent), expected);
  for (const std::string& group : {top + "/t", top + "/u", top}) rmdir(group.c_str());  // what a failure left
}

TEST(FakeCgroup2, ControllersFollowTheParentsSubtreeControl) {
  FakeCgroup2 fake;
  std::string run = fake.root() + "/run", nf = run + "/nf";
  ASSERT_EQ(fake.make_group(run), 0);
  EXPECT_FALSE(fake.exists(run + "/cpu.weight")) << "the root enables nothing for its children yet";
  ASSERT_EQ(fake.write(fake.root() + "/cgroup.subtree_control", "+cpu +cpuset"), 0);
  EXPECT_EQ(fake.text(fake.root() + "/cgroup.subtree_control"), "cpuset cpu\n") << "the kernel's order, not ours";
  EXPECT_EQ(fake.text(run + "/cgroup.controllers"), "cpuset cpu\n");
  EXPECT_EQ(fake.text(run + "/cpu.weight"), "100\n");
  EXPECT_EQ(fake.text(run + "/cpu.max"), "max 100000\n");
  EXPECT_EQ(fake.text(run + "/cpuset.cpus.partition"), "member\n");
  Sleeper sleeper;
  ASSERT_EQ(fake.write(run + "/cgroup.procs", std::to_string(sleeper.pid())), 0);
  EXPECT_EQ(fake.write(run + "/cgroup.subtree_control", "+cpu"), EBUSY) << "no internal processes";
  ASSERT_EQ(fake.write(fake.root() + "/cgroup.procs", std::to_string(sleeper.pid())), 0);
  ASSERT_EQ(fake.write(run + "/cgroup.subtree_control", "+cpu +cpuset"), 0);
  ASSERT_EQ(fake.make_group(nf), 0);
  EXPECT_EQ(fake.write(run + "/cgroup.procs", std::to_string(sleeper.pid())), EBUSY) << "run enables cpu below it";
  EXPECT_EQ(fake.write(nf + "/cpu.weight", "0"), ERANGE);
  EXPECT_EQ(fake.write(nf + "/cpu.weight", "10001"), ERANGE);
  EXPECT_EQ(fake.write(nf + "/cpu.weight", "ten"), EINVAL);
  EXPECT_EQ(fake.write(nf + "/cpu.weight", "10000"), 0);
  EXPECT_EQ(fake.write(nf + "/cpu.shares", "1024"), ENOENT) << "cgroup v2 has no cpu.shares";
  EXPECT_EQ(fake.write(nf + "/cpuset.cpus", "1-3,5"), 0);
  EXPECT_EQ(fake.write(nf + "/cpuset.cpus.partition", "isolated"), 0);
  EXPECT_EQ(fake.write(nf + "/cpuset.cpus.partition", "exclusive"), EINVAL);
  EXPECT_EQ(fake.write(fake.root() + "/cgroup.subtree_control", "-cpu"), EBUSY) << "run still enables cpu";
  ASSERT_EQ(fake.write(run + "/cgroup.subtree_control", "-cpu"), 0);
  EXPECT_FALSE(fake.exists(nf + "/cpu.weight"));
  EXPECT_TRUE(fake.exists(nf + "/cpuset.cpus"));
  EXPECT_EQ(fake.write(fake.root() + "/cgroup.subtree_control", "-cpu"), 0);
}

}  // namespace
}  // namespace tandem
