// Tests of worker planning: one process per NF by default; rtc groups NFs joined by single edges per core.
#include <gtest/gtest.h>

#include "schedulers/scheduler.h"
#include "schedulers/two_chain_deployment_test_support.h"

namespace tandem {
namespace {

// rtc with its options at their defaults, as the manager creates it from a resolved spec.
std::unique_ptr<Scheduler> default_rtc() {
  const SchedulerType& rtc = scheduler_types().at("rtc");
  SpecErrors errors;
  return rtc.create(resolve_args(rtc.options, json::object(), "scheduler", errors));
}

TEST(WorkerPlans, OneWorkerPerNfWithUniqueLcores) {
  Deployment d = two_chain_deployment();
  std::vector<WorkerPlan> plans = one_worker_per_nf(d);
  ASSERT_EQ(plans.size(), 5u);
  std::set<int> lcores;
  for (const WorkerPlan& p : plans) {
    lcores.insert(p.lcore_id);
    ASSERT_EQ(p.segments.size(), 1u);
    EXPECT_NE(p.lcore_id, 0);  // the manager's
  }
  EXPECT_EQ(lcores.size(), 5u);
  // a2 reads the ring a1 writes.
  EXPECT_EQ(plans[1].segments[0].in_rings, plans[0].segments[0].out_rings);
}

TEST(WorkerPlans, RtcGroupsConsecutiveNfsOnACore) {
  Deployment d = two_chain_deployment();
  auto scheduler = default_rtc();
  std::vector<WorkerPlan> plans = scheduler->plan_workers(d);
  ASSERT_EQ(plans.size(), 2u);  // core 1 and core 2
  const WorkerPlan& core1 = plans[0];
  EXPECT_EQ(core1.core, 1);
  ASSERT_EQ(core1.segments.size(), 3u);  // a1+a2, a4, b1
  EXPECT_EQ(core1.segments[0].nfs, (std::vector<int>{0, 1}));
  EXPECT_EQ(core1.segments[0].in_rings, std::vector<int>{d.chains[0].rings[0]});
  EXPECT_EQ(core1.segments[0].out_rings, std::vector<int>{d.chains[0].rings[2]});
  EXPECT_EQ(core1.segments[1].nfs, (std::vector<int>{3}));
  EXPECT_EQ(core1.segments[2].nfs, (std::vector<int>{4}));
  EXPECT_EQ(plans[1].segments[0].nfs, (std::vector<int>{2}));
}

TEST(WorkerPlans, RtcEndsASegmentAtAFanOutAndAtAJoin) {
  // cls -http-> waf -> out;  cls -other-> out: cls fans out, out joins; all on core 1.
  auto node = [](const std::string& name, const std::string& type) {
    return json{{"name", name}, {"type", type}, {"core", 1}};
  };
  json chain = {{"name", "g"},
                {"traffic", {{"sizes", {{64, 1}}}}},
                {"nfs", {node("cls", "http_classifier"), node("waf", "macswap"), node("out", "macswap")}},
                {"edges",
                 {{{"from", "cls"}, {"to", "waf"}, {"label", "http"}},
                  {{"from", "cls"}, {"to", "out"}, {"label", "other"}},
                  {{"from", "waf"}, {"to", "out"}}}}};
  Deployment d = parse_deployment({{"scheduler", {{"name", "rtc"}}}, {"chains", {chain}}});
  std::vector<WorkerPlan> plans = default_rtc()->plan_workers(d);
  ASSERT_EQ(plans.size(), 1u);
  ASSERT_EQ(plans[0].segments.size(), 3u);
  EXPECT_EQ(plans[0].segments[0].nfs, std::vector<int>{0});
  EXPECT_EQ(plans[0].segments[0].out_rings.size(), 2u);  // the labelled fan-out is its egress
  EXPECT_EQ(plans[0].segments[1].nfs, std::vector<int>{1});
  EXPECT_EQ(plans[0].segments[2].nfs, std::vector<int>{2});
  EXPECT_EQ(plans[0].segments[2].in_rings.size(), 2u);  // the join polls both
}

TEST(WorkerPlans, HybridGroupsACoresNativeNfsAndLeavesEachExternalOneItsOwn) {
  // a1 -> pmd -> a3 -> a4 on core 1, a5 on core 2: the native NFs of core 1 in one worker (a1; a3+a4), testpmd alone.
  auto node = [](const std::string& name, const std::string& type, int core) {
    return json{{"name", name}, {"type", type}, {"core", core}};
  };
  json chain = {{"name", "a"},
                {"traffic", {{"sizes", {{64, 1}}}}},
                {"nfs",
                 {node("a1", "macswap", 1), node("pmd", "external", 1), node("a3", "macswap", 1),
                  node("a4", "macswap", 1), node("a5", "macswap", 2)}}};
  Deployment d = parse_deployment({{"scheduler", {{"name", "hybrid"}}}, {"chains", {chain}}});
  const SchedulerType& hybrid = scheduler_types().at("hybrid");
  SpecErrors errors;
  std::vector<WorkerPlan> plans =
      hybrid.create(resolve_args(hybrid.options, json::object(), "scheduler", errors))->plan_workers(d);
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_EQ(plans[0].name, "native@core1");
  ASSERT_EQ(plans[0].segments.size(), 2u);
  EXPECT_EQ(plans[0].segments[0].nfs, std::vector<int>{0});
  EXPECT_EQ(plans[0].segments[1].nfs, (std::vector<int>{2, 3}));  // a call after a call: no ring, no switch
  EXPECT_EQ(plans[0].runtime, Runtime::PollLoop);
  EXPECT_EQ(plans[1].name, "native@core2");
  EXPECT_EQ(plans[2].name, "pmd");
  EXPECT_EQ(plans[2].runtime, Runtime::External);
  for (size_t i = 0; i < plans.size(); i++) {
    EXPECT_EQ(plans[i].index, static_cast<int>(i));
    EXPECT_EQ(plans[i].lcore_id, static_cast<int>(i) + 1);
  }
}

}  // namespace
}  // namespace tandem
