// Tests of starting a supervised child without fork: what it is given before its exec, its exec's failure told,
// and its death with the process that started it.
#include "supervised_spawn.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace tandem {
namespace {

// Runs `binary` with `args` as a supervised child, its output into a file; returns (wait status, output).
std::pair<int, std::string> run_child(const std::string& binary, const std::vector<std::string>& args,
                                      ChildSetup setup = {}) {
  char path[] = "/tmp/supervised-spawn-test-XXXXXX";
  int out = mkstemp(path);
  EXPECT_GE(out, 0);
  setup.stdout_to = out;
  pid_t pid = spawn_supervised(binary, args, setup);
  close(out);
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  unlink(path);
  return {status, text.str()};
}

// A /proc/<pid>/status line's value, e.g. "SigIgn".
std::string status_field(const std::string& status, const std::string& field) {
  size_t at = status.find(field + ":\t");
  if (at == std::string::npos) return "";
  size_t begin = at + field.size() + 2;
  return status.substr(begin, status.find('\n', begin) - begin);
}

TEST(SupervisedSpawn, TheChildIgnoresSigintKeepsTheManagersMaskAndWritesWhereAsked) {
  // The manager's own mask blocks a signal and handles another: the program gets neither.
  sigset_t blocked, before;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &blocked, &before);
  // cat, not a shell: dash clears its signal mask as it starts.
  auto [status, output] = run_child("/bin/cat", {"cat", "/proc/self/status"});
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  uint64_t ignored = std::stoull(status_field(output, "SigIgn"), nullptr, 16);
  EXPECT_TRUE(ignored & (1ull << (SIGINT - 1))) << output;
  // The manager's mask is the program's again: SIGUSR2 blocked, as the test's thread had it, nothing more.
  EXPECT_EQ(std::stoull(status_field(output, "SigBlk"), nullptr, 16), 1ull << (SIGUSR2 - 1)) << output;
}

TEST(SupervisedSpawn, AChildStartedIdleRunsUnderSchedIdle) {
  // /proc/<pid>/stat's 41st field: the policy (5: SCHED_IDLE, 0: SCHED_OTHER).
  const std::vector<std::string> policy = {"sh", "-c", "cut -d' ' -f41 /proc/$$/stat"};
  EXPECT_EQ(run_child("/bin/sh", policy, {.idle_policy = true}).second, "5\n");
  EXPECT_EQ(run_child("/bin/sh", policy).second, "0\n");
}

TEST(SupervisedSpawn, AProgramThatCannotBeExecutedLeavesAChildThatExitsWith127) {
  pid_t pid = spawn_supervised("/nonexistent/tandem-worker", {"tandem-worker"}, {});
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 127);
}

TEST(SupervisedSpawn, TheChildDiesWithTheProcessThatStartedIt) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  pid_t middle = fork();  // stands for the manager
  ASSERT_GE(middle, 0);
  if (middle == 0) {
    pid_t sleeper = spawn_supervised("/bin/sleep", {"sleep", "30"}, {});
    (void)!write(pipe_fds[1], &sleeper, sizeof sleeper);
    _exit(0);  // the manager gone: its child is killed
  }
  pid_t sleeper = 0;
  ASSERT_EQ(read(pipe_fds[0], &sleeper, sizeof sleeper), static_cast<ssize_t>(sizeof sleeper));
  waitpid(middle, nullptr, 0);
  bool gone = false;
  for (int i = 0; i < 5000 && !gone; i++) {  // killed: a zombie until the process it was handed to reaps it
    std::string stat;
    std::getline(std::ifstream("/proc/" + std::to_string(sleeper) + "/stat"), stat);
    size_t paren = stat.rfind(')');
    gone = paren == std::string::npos || stat.compare(paren + 2, 1, "Z") == 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(gone);
  if (!gone) kill(sleeper, SIGKILL);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

}  // namespace
}  // namespace tandem
