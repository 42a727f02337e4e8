// Tests of a module's plan put in the running workers' order: the same processes numbered another way are the same
// layout once ordered, a process not running comes after the running ones, other processes stay another layout, and
// user-level threads are never switched in place.
#include <gtest/gtest.h>

#include "contract/deployment.h"

namespace tandem {
namespace {

WorkerPlan process(const std::string& name, int core, std::vector<std::vector<int>> segments,
                   Runtime runtime = Runtime::PollLoop) {
  WorkerPlan plan{.name = name, .core = core, .runtime = runtime};
  for (std::vector<int>& nfs : segments) plan.segments.push_back(Segment{.nfs = std::move(nfs)});
  return plan;
}

std::vector<WorkerPlan> numbered(std::vector<WorkerPlan> plan) {
  for (size_t w = 0; w < plan.size(); w++) {
    plan[w].index = static_cast<int>(w);
    plan[w].lcore_id = plan[w].index + 1;
  }
  return plan;
}

// As a run that went from one module to per_core: core 1's NFs (0, 2) in a process each, NF 1 alone on core 2 in a
// process of rtc's for its core, numbered by core.
const std::vector<WorkerPlan> kRunning =
    numbered({process("fw", 1, {{0}}), process("count", 1, {{2}}), process("rtc@core2", 2, {{1}})});

TEST(RunningOrder, TheSameProcessesNumberedInTheNfsOrderAreTheRunningLayout) {
  std::vector<WorkerPlan> in_nf_order =
      numbered({process("fw", 1, {{0}}), process("check", 2, {{1}}), process("count", 1, {{2}})});
  EXPECT_FALSE(same_layout(in_nf_order, kRunning));
  std::vector<WorkerPlan> ordered = in_running_order(in_nf_order, kRunning);
  EXPECT_TRUE(same_layout(ordered, kRunning));
  ASSERT_EQ(ordered.size(), 3u);
  EXPECT_EQ(ordered[2].name, "check");  // the module's names: the run keeps its own for the processes it keeps
  for (size_t w = 0; w < ordered.size(); w++) {
    EXPECT_EQ(ordered[w].index, static_cast<int>(w));
    EXPECT_EQ(ordered[w].lcore_id, static_cast<int>(w) + 1);
  }
}

TEST(RunningOrder, ProcessesNotRunningComeAfterTheRunningOnesInThePlansOrder) {
  std::vector<WorkerPlan> with_a_chain =
      numbered({process("new1", 1, {{3}}), process("fw", 1, {{0}}), process("check", 2, {{1}}),
                process("new2", 2, {{4}}), process("count", 1, {{2}})});
  std::vector<WorkerPlan> ordered = in_running_order(with_a_chain, kRunning);
  std::vector<std::string> names;
  for (const WorkerPlan& plan : ordered) names.push_back(plan.name);
  EXPECT_EQ(names, (std::vector<std::string>{"fw", "count", "check", "new1", "new2"}));
  EXPECT_TRUE(same_layout(std::vector<WorkerPlan>(ordered.begin(), ordered.begin() + 3), kRunning));
}

TEST(RunningOrder, OtherProcessesStayAnotherLayout) {
  // rtc for both cores: core 1's NFs in one process, as two segments; another runtime for NF 1.
  std::vector<WorkerPlan> rtc = numbered({process("rtc@core1", 1, {{0}, {2}}), process("rtc@core2", 2, {{1}})});
  EXPECT_FALSE(same_layout(in_running_order(rtc, kRunning), kRunning));
  std::vector<WorkerPlan> threads = numbered({process("fw", 1, {{0}}), process("count", 1, {{2}}),
                                              process("bubble@core2", 2, {{1}}, Runtime::UserLevelThreads)});
  EXPECT_FALSE(same_layout(in_running_order(threads, kRunning), kRunning));
}

TEST(RunningOrder, UserLevelThreadsAreNeverTakenOverInPlace) {
  std::vector<WorkerPlan> in_nf_order =
      numbered({process("fw", 1, {{0}}), process("check", 2, {{1}}), process("count", 1, {{2}})});
  EXPECT_TRUE(switches_in_place(in_nf_order, kRunning));
  std::vector<WorkerPlan> threads =
      numbered({process("bubble@core1", 1, {{0}, {2}}, Runtime::UserLevelThreads), process("rtc@core2", 2, {{1}})});
  EXPECT_TRUE(same_layout(threads, threads));
  EXPECT_FALSE(switches_in_place(threads, threads));  // the same processes, but their threads start anew
}

}  // namespace
}  // namespace tandem
