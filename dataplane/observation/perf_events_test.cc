// Unit tests for perf_event_open counters: software events count, and a counter the kernel refuses says why
// instead of reading as zero.
#include "perf_events.h"

#include <linux/perf_event.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>

namespace tandem {
namespace {

void burn_cpu() {
  volatile uint64_t sink = 0;
  for (uint64_t i = 0; i < 20'000'000; i++) sink = sink + i;
}

const PerfEventSpec& event_named(const std::string& name) {
  for (const PerfEventSpec& spec : nf_perf_events())
    if (spec.name == name) return spec;
  throw std::runtime_error("no event " + name);
}

uint64_t thread_cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

// The task clock is the thread's CPU time, which the thread's own CPU clock measures around the same work: the two
// agree to within the few microseconds between opening the counter and reading the clock, against the 20-50 ms the
// work takes, but for the time a hypervisor takes the vCPU away while the thread runs on it, which the task clock
// counts and the CPU clock leaves out (a CI guest under load: 27 % more). So a counter that counted half the work,
// or twice, fails on any host, and one that counted the steal too passes.
TEST(PerfEvents, ASoftwareCounterCountsTheCallersWork) {
  PerfCounter clock(0, event_named("task_clock_ns"));
  ASSERT_TRUE(clock.counting()) << clock.refused_because();  // software events need no PMU: every kernel has them
  uint64_t before = thread_cpu_ns();
  burn_cpu();
  uint64_t spent = thread_cpu_ns() - before;
  std::optional<uint64_t> ns = clock.read();
  ASSERT_TRUE(ns.has_value());
  EXPECT_GE(static_cast<double>(*ns), 0.9 * static_cast<double>(spent));
  EXPECT_LE(static_cast<double>(*ns), 1.75 * static_cast<double>(spent));
}

TEST(PerfEvents, ARefusedCounterSaysWhyAndReadsNothing) {
  // No PMU has hardware event 0xffff: the kernel refuses it everywhere, as it refuses every hardware event in a VM
  // without a virtual PMU.
  PerfCounter bogus(0, PerfEventSpec{"bogus", PERF_TYPE_HARDWARE, 0xffff});
  EXPECT_FALSE(bogus.counting());
  EXPECT_NE(bogus.refused_because().find("unsupported on this machine"), std::string::npos) << bogus.refused_because();
  EXPECT_FALSE(bogus.read().has_value());
}

TEST(PerfEvents, HardwareCountersCountOrSayUnsupportedNeverZero) {
  // Whichever this machine is: a PMU gives a positive count for real work, no PMU a reason.
  for (const char* name : {"cycles", "instructions"}) {
    PerfCounter counter(0, event_named(name));
    if (!counter.counting()) {
      EXPECT_FALSE(counter.refused_because().empty()) << name;
      continue;
    }
    burn_cpu();
    std::optional<uint64_t> value = counter.read();
    ASSERT_TRUE(value.has_value()) << name;
    EXPECT_GT(*value, 0u) << name;
  }
}

// tracefs where this machine leaves it unmounted (as runs find it, and mount it): in a mount namespace of this test
// process's own, private, so the machine's mounts do not change. False where it cannot (not root, no tracefs).
bool tracefs_of_our_own() {
  if (std::ifstream("/sys/kernel/tracing/events/raw_syscalls/sys_enter/id").good()) return true;
  return unshare(CLONE_NEWNS) == 0 && mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
         mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0;
}

TEST(PerfEvents, SyscallsAreATracepointThatCountsEveryCall) {
  SyscallsEvent syscalls = syscalls_event();
  if (!syscalls.spec) {
    EXPECT_NE(syscalls.unavailable_because.find("tracefs"), std::string::npos);
    if (!tracefs_of_our_own())
      GTEST_SKIP() << "no tracefs here (not root, or a kernel without it): " << strerror(errno);
    syscalls = syscalls_event();
    ASSERT_TRUE(syscalls.spec.has_value()) << syscalls.unavailable_because;
  }
  PerfCounter counter(0, *syscalls.spec);
  if (!counter.counting()) GTEST_SKIP() << counter.refused_because();  // needs root or a permissive paranoid level
  for (int i = 0; i < 100; i++) getppid();
  std::optional<uint64_t> calls = counter.read();
  ASSERT_TRUE(calls.has_value());
  EXPECT_GE(*calls, 100u);
  EXPECT_LE(*calls, 110u);  // the 100 calls and the counter's own read, not twice as many
}

}  // namespace
}  // namespace tandem
