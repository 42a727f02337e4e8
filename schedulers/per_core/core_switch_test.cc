// Tests of one core's live switch: per_core with the others' modules kept, or one module where all would match.
#include <gtest/gtest.h>

#include "core_switch.h"
#include "schedulers/scheduler.h"

namespace tandem {
namespace {

Deployment two_cores(const SchedulerConfig& scheduler) {
  json chain = {
      {"name", "a"},
      {"traffic", {{"sizes", {{64, 1}}}}},
      {"nfs",
       {{{"name", "a1"}, {"type", "macswap"}, {"core", 1}}, {{"name", "a2"}, {"type", "macswap"}, {"core", 2}}}}};
  Deployment d = parse_deployment({{"scheduler", {{"name", scheduler.name}}}, {"chains", {chain}}});
  d.scheduler = scheduler;
  return d;
}

SchedulerConfig resolved(const std::string& name, const json& given = json::object()) {
  SpecErrors errors;
  return {name, resolve_args(scheduler_types().at(name).options, given, "scheduler", errors)};
}

TEST(CoreSwitch, OneCoreSwitchedKeepsTheOthersModule) {
  std::string why;
  SchedulerConfig next = with_core_switched(two_cores(resolved("rtc")), 2, resolved("coop", {{"k", 2}}), why);
  EXPECT_TRUE(why.empty());
  ASSERT_EQ(next.name, "per_core");
  const json& cores = next.options["cores"];
  ASSERT_EQ(cores.size(), 2u);
  EXPECT_EQ(cores[0]["core"], 1);
  EXPECT_EQ(cores[0]["name"], "rtc");
  EXPECT_EQ(cores[1]["core"], 2);
  EXPECT_EQ(cores[1]["name"], "coop");
  EXPECT_EQ(cores[1]["options"]["k"], 2);
}

TEST(CoreSwitch, TheLastDifferentCoreSwitchedBackGivesOneModule) {
  std::string why;
  Deployment d = two_cores(resolved("rtc"));
  d.scheduler = with_core_switched(d, 2, resolved("coop"), why);
  ASSERT_EQ(d.scheduler.name, "per_core");
  SchedulerConfig back = with_core_switched(d, 2, resolved("rtc"), why);
  EXPECT_EQ(back.name, "rtc");
  // The same module with other options is another choice.
  EXPECT_EQ(with_core_switched(d, 2, resolved("rtc", {{"idle", "sleep"}}), why).name, "per_core");
}

TEST(CoreSwitch, ACoreWithoutNfsYetGetsAChoiceOfItsOwn) {
  std::string why;
  SchedulerConfig next = with_core_switched(two_cores(resolved("rtc")), 3, resolved("coop"), why);
  ASSERT_EQ(next.name, "per_core");
  ASSERT_EQ(next.options["cores"].size(), 3u);
  EXPECT_EQ(next.options["cores"][2]["core"], 3);
}

}  // namespace
}  // namespace tandem
