// Tests of one core's part of a run: what it holds, its own indexes mapped to the run's, and per_core's plan and
// checks made of the parts.
#include <gtest/gtest.h>

#include <memory>

#include "core_slice.h"
#include "schedulers/scheduler.h"
#include "schedulers/two_chain_deployment_test_support.h"

namespace tandem {
namespace {

json per_core(const json& cores) { return {{"name", "per_core"}, {"options", {{"cores", cores}}}}; }

TEST(CoreSlice, ACoreBetweenTwoOthersSeesItsRingsAsTheChainsEnds) {
  Deployment d = two_chain_deployment({{"name", "coop"}});
  CoreSlice slice = slice_of_core(d, 2);
  const Deployment& part = slice.deployment;
  ASSERT_EQ(part.nfs.size(), 1u);
  EXPECT_EQ(part.nfs[0].name, "a3");
  EXPECT_EQ(part.nfs[0].index, 0);
  EXPECT_EQ(slice.map.nfs, std::vector<int>{2});
  // a2->a3 and a3->a4, their other ends on core 1: -1 here, as the generator and the sink are.
  ASSERT_EQ(part.rings.size(), 2u);
  EXPECT_EQ(slice.map.rings, (std::vector<int>{d.nfs[2].in_rings[0], d.nfs[2].out_rings[0]}));
  EXPECT_EQ(part.rings[0].from, -1);
  EXPECT_EQ(part.rings[0].to, 0);
  EXPECT_EQ(part.rings[1].from, 0);
  EXPECT_EQ(part.rings[1].to, -1);
  EXPECT_EQ(part.nfs[0].in_rings, std::vector<int>{0});
  EXPECT_EQ(part.nfs[0].out_rings, std::vector<int>{1});
  ASSERT_EQ(part.chains.size(), 1u);  // chain b has nothing on core 2
  EXPECT_EQ(slice.map.chains, std::vector<int>{0});
  EXPECT_EQ(part.chains[0].nfs, std::vector<int>{0});
  EXPECT_EQ(part.chains[0].entry_ring, 0);
  EXPECT_EQ(part.chains[0].exit_rings, std::vector<int>{1});
}

TEST(CoreSlice, ACoreWithSeveralChainsKeepsTheirOrder) {
  Deployment d = two_chain_deployment({{"name", "coop"}});
  CoreSlice slice = slice_of_core(d, 1);
  const Deployment& part = slice.deployment;
  EXPECT_EQ(slice.map.nfs, (std::vector<int>{0, 1, 3, 4}));
  ASSERT_EQ(part.chains.size(), 2u);
  EXPECT_EQ(part.chains[0].nfs, (std::vector<int>{0, 1, 2}));  // a1, a2, a4
  EXPECT_EQ(part.chains[1].nfs, std::vector<int>{3});          // b1
  EXPECT_EQ(part.nfs[3].chain, 1);
  EXPECT_EQ(slice.map.rings[static_cast<size_t>(part.chains[0].entry_ring)], d.chains[0].entry_ring);
  // Chain a leaves core 1 twice: to a3 on core 2, and to the sink.
  ASSERT_EQ(part.chains[0].exit_rings.size(), 2u);
  EXPECT_EQ(slice.map.rings[static_cast<size_t>(part.chains[0].exit_rings[0])], d.nfs[1].out_rings[0]);
  EXPECT_EQ(slice.map.rings[static_cast<size_t>(part.chains[0].exit_rings[1])], d.chains[0].exit_rings[0]);
  // The ring into a4 comes from core 2: a4's segment starts anew there.
  EXPECT_EQ(part.rings[static_cast<size_t>(part.nfs[2].in_rings[0])].from, -1);
}

TEST(PerCore, EachCoreIsPlannedByItsModuleAndTheRunSeesItsIndexes) {
  Deployment d = two_chain_deployment(
      per_core({{{"core", 1}, {"name", "rtc"}}, {{"core", 2}, {"name", "coop"}, {"options", {{"k", 4}}}}}));
  SpecErrors errors;
  const SchedulerType& type = scheduler_types().at("per_core");
  d.scheduler.options = resolve_args(type.options, d.scheduler.options, "scheduler", errors);
  type.check(d, errors);
  ASSERT_TRUE(errors.empty()) << errors.front().path << ": " << errors.front().message;
  std::vector<WorkerPlan> plans = type.create(d.scheduler.options)->plan_workers(d);
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(plans[0].core, 1);  // rtc's one process for core 1: a1+a2, a4, b1
  ASSERT_EQ(plans[0].segments.size(), 3u);
  EXPECT_EQ(plans[0].segments[0].nfs, (std::vector<int>{0, 1}));
  EXPECT_EQ(plans[0].segments[0].out_rings, d.nfs[1].out_rings);
  EXPECT_EQ(plans[0].segments[1].nfs, std::vector<int>{3});
  EXPECT_EQ(plans[0].segments[2].nfs, std::vector<int>{4});
  EXPECT_EQ(plans[1].name, "a3");  // coop's process for a3
  EXPECT_EQ(plans[1].segments[0].in_rings, d.nfs[2].in_rings);
  EXPECT_EQ(plans[1].segments[0].out_rings, d.nfs[2].out_rings);
  EXPECT_EQ(plans[0].lcore_id, 1);
  EXPECT_EQ(plans[1].lcore_id, 2);
  EXPECT_EQ(plans[1].index, 1);

  // Once planned, each core's part holds its workers, numbered from 0.
  d.workers = plans;
  EXPECT_EQ(slice_of_core(d, 2).map.workers, std::vector<int>{1});
  EXPECT_EQ(slice_of_core(d, 2).deployment.workers[0].segments[0].nfs, std::vector<int>{0});
}

TEST(PerCore, RunningWorkersKeepTheirPlacesWhenTheCoresPlanAnew) {
  Deployment d = two_chain_deployment(per_core({{{"core", 1}, {"name", "coop"}}, {{"core", 2}, {"name", "coop"}}}));
  const SchedulerType& type = scheduler_types().at("per_core");
  std::unique_ptr<Scheduler> scheduler = type.create(d.scheduler.options);
  // As a run that started with a3 alone: its worker first, the others after it.
  d.workers = scheduler->plan_workers(d);
  std::rotate(d.workers.begin(), d.workers.begin() + 4, d.workers.end());
  for (size_t w = 0; w < d.workers.size(); w++) d.workers[w].index = static_cast<int>(w);
  std::vector<WorkerPlan> again = scheduler->plan_workers(d);
  ASSERT_EQ(again.size(), 5u);
  EXPECT_EQ(again[0].name, "a3");
  EXPECT_TRUE(same_layout(again, d.workers));
}

TEST(PerCore, RefusesACoreWithoutAModuleAndModulesThatCannotRunOneCore) {
  const SchedulerType& type = scheduler_types().at("per_core");
  auto errors_of = [&](const json& cores) {
    Deployment d = two_chain_deployment(per_core(cores));
    SpecErrors errors;
    type.check(d, errors);
    return errors;
  };
  SpecErrors missing = errors_of({{{"core", 1}, {"name", "rtc"}}});
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].path, "scheduler.cores");
  EXPECT_NE(missing[0].message.find("core 2 holds NFs"), std::string::npos);

  SpecErrors nested = errors_of({{{"core", 1}, {"name", "auto"}}, {{"core", 2}, {"name", "rtc"}}});
  ASSERT_EQ(nested.size(), 1u);
  EXPECT_EQ(nested[0].path, "scheduler.cores[0].name");

  SpecErrors option =
      errors_of({{{"core", 1}, {"name", "rtc"}}, {{"core", 2}, {"name", "coop"}, {"options", {{"q", 1}}}}});
  ASSERT_EQ(option.size(), 1u);
  EXPECT_EQ(option[0].path, "scheduler.cores[1].options.q");

  SpecErrors twice = errors_of({{{"core", 1}, {"name", "rtc"}}, {{"core", 1}, {"name", "coop"}}});
  ASSERT_FALSE(twice.empty());
  EXPECT_EQ(twice[0].path, "scheduler.cores[1].core");

  SpecErrors field = errors_of({{{"core", 1}, {"name", "rtc"}, {"sched", "x"}}, {{"core", 2}, {"name", "rtc"}}});
  ASSERT_EQ(field.size(), 1u);
  EXPECT_EQ(field[0].path, "scheduler.cores[0].sched");
}

TEST(PerCore, SlicedHintsReachTheRunsWorkersNfsAndChains) {
  auto stats = std::make_unique<StatsZone>();
  IndexMap map{.whole = false, .nfs = {3, 5}, .rings = {}, .chains = {2}, .workers = {4, 1}};
  WorkerHints run(*stats);
  WorkerHints part = run.sliced(map);
  part.set_yield_policy(0, {.after_batches = 7});
  EXPECT_EQ(stats->workers[4].yield.after_batches, 7u);
  EXPECT_EQ(stats->workers[0].yield.after_batches, 0u);
  part.assign(1, 1);  // the part's NF 1 to its worker 1: the run's NF 5 to worker 1
  EXPECT_EQ(stats->nf_control[5].owner, 1);
  EXPECT_EQ(part.owner(1), 1);
  run.assign(5, 2);  // a worker the part does not see
  EXPECT_EQ(part.owner(1), -1);
  part.set_entry_open(0, false);
  EXPECT_EQ(stats->chains[2].entry_closed, 1u);
}

}  // namespace
}  // namespace tandem
