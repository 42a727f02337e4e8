// Tests of auto's plan on a run over two NF cores: where the cores choose differently, per_core runs each core's
// choice, which auto's check accepts; where they choose alike, one policy lays out every core.
#include <gtest/gtest.h>

#include "schedulers/scheduler.h"

namespace tandem {
namespace {

// Chain app on core 1: a Tandem NF, then testpmd. Chain web on core 2: three Tandem NFs in a line. Both at a
// trickle (20 kpps), so that core 2's NFs could sleep between packets.
Deployment external_beside_natives(const std::string& objective, bool external = true) {
  json app = {{"name", "app"},
              {"traffic", {{"sizes", {{64, 1}}}, {"rate_pps", 2e4}, {"mean_rate_pps", 2e4}}},
              {"nfs",
               {{{"name", "fw"}, {"type", "macswap"}, {"core", 1}, {"cost_cycles", 300}},
                {{"name", "pmd"},
                 {"type", external ? "external" : "macswap"},
                 {"core", 1},
                 {"cost_cycles", 300},
                 {"args", {{"forward_mode", "io"}}}}}}};
  json web = {{"name", "web"},
              {"traffic", {{"sizes", {{64, 1}}}, {"rate_pps", 2e4}, {"mean_rate_pps", 2e4}}},
              {"nfs",
               {{{"name", "ttl"}, {"type", "macswap"}, {"core", 2}, {"cost_cycles", 300}},
                {{"name", "swap"}, {"type", "macswap"}, {"core", 2}, {"cost_cycles", 300}},
                {{"name", "check"}, {"type", "macswap"}, {"core", 2}, {"cost_cycles", 300}}}}};
  Deployment d = parse_deployment(
      {{"scheduler", {{"name", "auto"}, {"options", {{"objective", objective}}}}}, {"chains", {app, web}}});
  SpecErrors errors;
  d.scheduler.options = resolve_args(scheduler_types().at("auto").options, d.scheduler.options, "scheduler", errors);
  EXPECT_TRUE(errors.empty());
  return d;
}

TEST(AutoPlan, CoresThatChooseDifferentlyRunPerCore) {
  Deployment d = external_beside_natives("efficiency");
  const SchedulerType& type = scheduler_types().at("auto");
  SpecErrors errors;
  type.check(d, errors);
  ASSERT_TRUE(errors.empty()) << errors.front().path << ": " << errors.front().message;
  std::vector<WorkerPlan> plans = type.create(d.scheduler.options)->plan_workers(d);
  // Core 2: rtc-sleep's one process for the line; core 1: a process for each of fw and testpmd (unis), or the
  // native worker and testpmd (hybrid): two either way.
  std::vector<const WorkerPlan*> core1, core2;
  for (const WorkerPlan& plan : plans) (plan.core == 1 ? core1 : core2).push_back(&plan);
  ASSERT_EQ(core2.size(), 1u);
  EXPECT_EQ(core2[0]->segments.size(), 1u);
  EXPECT_EQ(core2[0]->segments[0].nfs, (std::vector<int>{2, 3, 4}));
  ASSERT_EQ(core1.size(), 2u);
  EXPECT_EQ(core1[1]->runtime, Runtime::External);
}

TEST(AutoPlan, CoresThatChooseAlikeRunOnePolicy) {
  Deployment d = external_beside_natives("efficiency", false);  // Tandem NFs on both cores: rtc-sleep for each
  std::vector<WorkerPlan> plans = scheduler_types().at("auto").create(d.scheduler.options)->plan_workers(d);
  ASSERT_EQ(plans.size(), 2u);  // one process a core
  EXPECT_EQ(plans[0].segments[0].nfs, (std::vector<int>{0, 1}));
  EXPECT_EQ(plans[1].segments[0].nfs, (std::vector<int>{2, 3, 4}));
}

}  // namespace
}  // namespace tandem
