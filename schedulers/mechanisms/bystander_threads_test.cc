// Tests of keeping a stopped process's other threads on the core of its scheduled thread, on a real process.
#include "bystander_threads.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

namespace tandem {
namespace {

// A child process with three threads sleeping as DPDK's control threads do: its main thread, an "lcore" thread that
// pins itself to the last CPU (the one a backend schedules, as testpmd's rte-worker), and one more.
class ThreeThreads {
 public:
  ThreeThreads() {
    int ends[2];
    if (pipe(ends) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test
      std::thread lcore([&] {
        cpu_set_t last;
        CPU_ZERO(&last);
        CPU_SET(sysconf(_SC_NPROCESSORS_ONLN) - 1, &last);
        sched_setaffinity(0, sizeof last, &last);
        pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
        if (write(ends[1], &tid, sizeof tid) != sizeof tid) _exit(1);
        pause();
      });
      std::thread other([] { pause(); });
      pause();
    }
    close(ends[1]);
    if (read(ends[0], &lcore_, sizeof lcore_) != sizeof lcore_) throw std::runtime_error("no lcore thread");
    close(ends[0]);
    while (threads().size() < 3) usleep(1000);  // the third thread may come after the lcore said its id
  }
  ~ThreeThreads() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }
  pid_t lcore() const { return lcore_; }
  std::set<pid_t> threads() const {
    std::set<pid_t> found;
    std::string dir = "/proc/" + std::to_string(pid_) + "/task";
    if (DIR* d = opendir(dir.c_str())) {
      while (const dirent* entry = readdir(d))
        if (int tid = std::atoi(entry->d_name); tid > 0) found.insert(tid);
      closedir(d);
    }
    return found;
  }

 private:
  pid_t pid_ = 0, lcore_ = 0;
};

cpu_set_t affinity(pid_t thread) {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(thread, sizeof set, &set);
  return set;
}

TEST(BystanderThreads, OtherThreadsFollowTheScheduledOneAndComeBack) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "one CPU: every thread is already where the lcore is";
  ThreeThreads child;
  cpu_set_t lcore = affinity(child.lcore()), before = affinity(child.pid());
  ASSERT_FALSE(CPU_EQUAL(&lcore, &before));
  BystanderThreads bystanders;
  EXPECT_EQ(bystanders.gather(child.lcore()), 2) << "the main thread and the other one";
  for (pid_t thread : child.threads()) {
    cpu_set_t now = affinity(thread);
    EXPECT_TRUE(CPU_EQUAL(&now, &lcore)) << "thread " << thread << " is not on the lcore's CPU";
  }
  bystanders.release();
  for (pid_t thread : child.threads()) {
    cpu_set_t now = affinity(thread), expected = thread == child.lcore() ? lcore : before;
    EXPECT_TRUE(CPU_EQUAL(&now, &expected)) << "thread " << thread << " did not get its CPUs back";
  }
}

TEST(BystanderThreads, AGoneTaskMovesNothing) {
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  BystanderThreads bystanders;
  EXPECT_EQ(bystanders.gather(child), 0);
  bystanders.release();  // nothing to give back, and no throw
}

TEST(BystanderThreads, ProcessOfAThreadIsItsThreadGroup) {
  ThreeThreads child;
  EXPECT_EQ(process_of(child.lcore()), child.pid());
  EXPECT_EQ(process_of(child.pid()), child.pid());
}

}  // namespace
}  // namespace tandem
