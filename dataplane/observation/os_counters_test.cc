// Tests of the /proc scheduling counters read for a process: this test's own, and a process that is gone.
#include "os_counters.h"

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace tandem {
namespace {

// The text of one of this process's /proc files, as a reader of it would see it.
std::string own_proc_file(const char* file) {
  std::ifstream in(std::string("/proc/self/") + file);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(OsCounters, ReadsThisProcessAsRunningWithItsSwitchesAndCpuTime) {
  OsSample before = sample_os_counters(getpid());
  volatile uint64_t spin = 0;
  for (uint64_t i = 0; i < 50'000'000; i++) spin = spin + i;  // CPU time for cpu_ns to grow by
  OsSample after = sample_os_counters(getpid());
  EXPECT_EQ(after.state, 'R');  // it is reading its own counters: on a CPU
  ASSERT_TRUE(after.voluntary_switches && after.involuntary_switches);
  EXPECT_GE(*after.voluntary_switches, *before.voluntary_switches);
  if (before.cpu_ns && after.cpu_ns) EXPECT_GT(*after.cpu_ns, *before.cpu_ns);
  ASSERT_TRUE(after.user_ticks && after.system_ticks);
  EXPECT_GE(*after.user_ticks, *before.user_ticks);
  EXPECT_GT(after.when_s, before.when_s);
  // /proc/PID/sched exists only with the scheduler's debug files; where it does, its migrations are read.
  EXPECT_EQ(after.migrations.has_value(), own_proc_file("sched").find("se.nr_migrations") != std::string::npos);
}

TEST(OsCounters, AProcessThatIsGoneHasNoCounters) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  OsSample gone = sample_os_counters(child);
  EXPECT_EQ(gone.state, '?');
  EXPECT_FALSE(gone.voluntary_switches || gone.involuntary_switches || gone.cpu_ns || gone.migrations ||
               gone.user_ticks);
}

}  // namespace
}  // namespace tandem
