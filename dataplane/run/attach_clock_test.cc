// Tests of a starting worker's attach clock on real child processes: one that sleeps makes no progress, one that
// spins does until the most it is given.
#include "attach_clock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace tandem {
namespace {

using std::chrono::milliseconds;

pid_t child(bool spins) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(30);  // never outlives the test
    volatile uint64_t spun = 0;
    while (spins) spun = spun + 1;
    pause();
    _exit(0);
  }
  return pid;
}

void end(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

// What the clock says, looked at every 10 ms, until it says something or `for_ms` passed.
std::optional<std::string> watched(AttachClock& clock, int for_ms) {
  auto until = AttachClock::Clock::now() + milliseconds(for_ms);
  while (AttachClock::Clock::now() < until) {
    if (std::optional<std::string> late = clock.late()) return late;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return std::nullopt;
}

TEST(AttachClock, AProcessThatUsesNoCpuIsLateOnceItsTimeWithoutProgressHasPassed) {
  pid_t pid = child(false);
  AttachClock clock(pid, 0.3, 60);
  std::optional<std::string> late = watched(clock, 5000);
  end(pid);
  ASSERT_TRUE(late.has_value());
  EXPECT_GE(AttachClock::Clock::now() - clock.launched(), milliseconds(300));
  EXPECT_NE(late->find("used no CPU for 0.3 s"), std::string::npos) << *late;
}

TEST(AttachClock, AProcessThatRunsIsGivenItsMostThenNamedLate) {
  // It spins for 1.5 s with 1 s allowed without progress: a spinning process gets a CPU within 1 s on any host that
  // runs this test (the kernel's fair share), so only the most it is given ends its wait.
  pid_t pid = child(true);
  AttachClock clock(pid, 1.0, 1.5);
  std::optional<std::string> late = watched(clock, 5000);
  // From the clock's own start: a time taken after its construction (which reads /proc) would be later by that read,
  // and a loaded host made the wait look 2 ms short.
  auto waited = AttachClock::Clock::now() - clock.launched();
  end(pid);
  ASSERT_TRUE(late.has_value());
  EXPECT_GE(waited, milliseconds(1500));
  EXPECT_NE(late->find("still not attached 1.5 s after its launch, though it ran"), std::string::npos) << *late;
}

TEST(AttachClock, AGoneProcessIsJudgedByTheWallClock) {
  pid_t pid = child(false);
  end(pid);  // reaped: its /proc entry is gone
  AttachClock clock(pid, 0.2, 60);
  EXPECT_FALSE(clock.late().has_value());
  EXPECT_TRUE(watched(clock, 5000).has_value());
}

}  // namespace
}  // namespace tandem
