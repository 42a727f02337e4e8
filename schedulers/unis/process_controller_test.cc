// Tests of each process-controller backend on two real spinning processes sharing one core.
#include "process_controller.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

namespace tandem::unis {
namespace {

// Two children pinned to the last CPU, each counting in shared memory as fast as it can.
class Spinners {
 public:
  Spinners() {
    counters_ = static_cast<volatile uint64_t*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    int cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
    cpu_set_t mine, theirs;
    CPU_ZERO(&mine);
    CPU_SET(0, &mine);
    sched_setaffinity(0, sizeof(mine), &mine);  // the test itself stays off the children's core
    CPU_ZERO(&theirs);
    CPU_SET(cpus - 1, &theirs);
    for (int i = 0; i < 2; i++) {
      pid_t pid = fork();
      if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test
        sched_setaffinity(0, sizeof(theirs), &theirs);
        for (;;) counters_[i * 8] = counters_[i * 8] + 1;
      }
      pids_[i] = pid;
    }
  }
  ~Spinners() {
    for (pid_t pid : pids_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    munmap(const_cast<uint64_t*>(counters_), 4096);
  }
  pid_t pid(int i) const { return pids_[i]; }
  // Which of the two made progress over 100 ms (longer than an RT-throttling gap of 50 ms).
  std::pair<bool, bool> progress() const {
    uint64_t a = counters_[0], b = counters_[8];
    usleep(100000);
    return {counters_[0] != a, counters_[8] != b};
  }

 private:
  volatile uint64_t* counters_;
  pid_t pids_[2] = {0, 0};
};

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
}  // namespace tandem::unis
