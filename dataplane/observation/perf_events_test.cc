// Unit tests for perf_event_open counters: software events count, and a counter the kernel refuses says why
// instead of reading as zero.
#include "perf_events.h"

#include <linux/perf_event.h>

#include <gtest/gtest.h>

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

TEST(PerfEvents, ASoftwareCounterCountsTheCallersWork) {
  PerfCounter clock(0, event_named("task_clock_ns"));
  ASSERT_TRUE(clock.counting()) << clock.refused_because();  // software events need no PMU: every kernel has them
  burn_cpu();
  std::optional<uint64_t> ns = clock.read();
  ASSERT_TRUE(ns.has_value());
  EXPECT_GT(*ns, 1'000'000u);  // 20 M additions take well over a millisecond on any machine
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

TEST(PerfEvents, SyscallsAreATracepointOrSayWhyNot) {
  SyscallsEvent syscalls = syscalls_event();
  if (!syscalls.spec) {
    EXPECT_NE(syscalls.unavailable_because.find("tracefs"), std::string::npos);
    return;
  }
  PerfCounter counter(0, *syscalls.spec);
  if (!counter.counting()) GTEST_SKIP() << counter.refused_because();  // needs root or a permissive paranoid level
  for (int i = 0; i < 100; i++) getppid();
  std::optional<uint64_t> calls = counter.read();
  ASSERT_TRUE(calls.has_value());
  EXPECT_GE(*calls, 100u);
}

}  // namespace
}  // namespace tandem
