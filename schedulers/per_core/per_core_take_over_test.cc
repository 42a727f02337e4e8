// Tests of per_core over its cores' modules: one core's live switch in place keeps the modules of the cores the switch
// leaves as they were (not detached, not attached again), and how long per_core may go without a tick is the least
// of what its modules may.
#include <gtest/gtest.h>

#include <memory>

#include "contract/shm_layout.h"
#include "core_switch.h"
#include "schedulers/scheduler.h"

namespace tandem {
namespace {

// What the recording modules did, in order: "attach g1 a1" (its generation option, its part's NFs).
std::vector<std::string> g_log;

class Recorder final : public Scheduler {
 public:
  Recorder(int64_t generation, int64_t absence_us) : generation_(generation), absence_us_(absence_us) {}
  void attach(SchedulerView& view) override { g_log.push_back("attach " + describe(view)); }
  void detach(SchedulerView& view) override { g_log.push_back("detach " + describe(view)); }
  uint64_t longest_absence_ns() const override {
    return absence_us_ == 0 ? kNoAbsenceBound : static_cast<uint64_t>(absence_us_) * 1000;
  }

 private:
  std::string describe(const SchedulerView& view) const {
    std::string text = "g" + std::to_string(generation_);
    for (const NfConfig& nf : view.deployment.nfs) text += " " + nf.name;
    return text;
  }
  int64_t generation_, absence_us_;
};

const SchedulerRegistration recorder({
    .name = "test_recorder",
    .help = "records its attaches and detaches (tests only)",
    .options =
        {{.name = "generation", .type = ArgType::Integer, .default_value = 1, .help = "", .min = 1, .max = 9},
         {.name = "absence_us", .type = ArgType::Integer, .default_value = 0, .help = "", .min = 0, .max = 1000}},
    .requirements = [](const json&) { return MachineRequirements(); },
    .create =
        [](const json& options) {
          return std::make_unique<Recorder>(options["generation"].get<int64_t>(), options["absence_us"].get<int64_t>());
        },
});

SchedulerConfig resolved(const std::string& name, const json& given = json::object()) {
  SpecErrors errors;
  return {name, resolve_args(scheduler_types().at(name).options, given, "scheduler", errors)};
}

struct TwoCoreRun {
  Deployment d;
  std::unique_ptr<StatsZone> stats = std::make_unique<StatsZone>();
  std::vector<rte_ring*> rings;
  std::vector<pid_t> pids;
  std::unique_ptr<SchedulerView> view;

  TwoCoreRun() {
    json chain = {
        {"name", "a"},
        {"traffic", {{"sizes", {{64, 1}}}}},
        {"nfs",
         {{{"name", "a1"}, {"type", "macswap"}, {"core", 1}}, {{"name", "a2"}, {"type", "macswap"}, {"core", 2}}}}};
    d = parse_deployment({{"scheduler", {{"name", "test_recorder"}}}, {"chains", {chain}}});
    d.scheduler = resolved("test_recorder");
    std::string why;
    d.scheduler = with_core_switched(d, 2, resolved("test_recorder", {{"generation", 2}}), why);  // per_core
    rings.assign(d.rings.size(), nullptr);
    view = std::make_unique<SchedulerView>(d, *stats, rings, pids, WorkerHints(*stats));
  }
  std::unique_ptr<Scheduler> create(const SchedulerConfig& config) {
    std::unique_ptr<Scheduler> module = scheduler_types().at(config.name).create(config.options);
    d.workers = module->plan_workers(d);
    pids.assign(d.workers.size(), 0);
    return module;
  }
};

TEST(PerCoreTakeOver, OneCoresSwitchLeavesTheOtherCoresModuleAttached) {
  TwoCoreRun run;
  ASSERT_EQ(run.d.scheduler.name, "per_core");
  std::unique_ptr<Scheduler> running = run.create(run.d.scheduler);
  running->attach(*run.view);
  EXPECT_EQ(g_log, (std::vector<std::string>{"attach g1 a1", "attach g2 a2"}));
  // Core 2 from generation 2 to 3; core 1 as it was.
  std::string why;
  SchedulerConfig next_config = with_core_switched(run.d, 2, resolved("test_recorder", {{"generation", 3}}), why);
  ASSERT_EQ(next_config.name, "per_core");
  g_log.clear();
  run.stats->workers[1].yield.after_batches = 5;  // what core 2's module asked of its worker
  std::unique_ptr<Scheduler> next = run.create(next_config);
  ASSERT_TRUE(next->take_over(*running, *run.view));
  EXPECT_EQ(g_log, (std::vector<std::string>{"detach g2 a2", "attach g3 a2"})) << "core 1's module untouched";
  EXPECT_EQ(run.stats->workers[1].yield.after_batches, 0u) << "the switched core's hints made neutral";
  running.reset();  // the old per_core goes; the module it handed over lives on in the new one
  g_log.clear();
  next->detach(*run.view);
  EXPECT_EQ(g_log, (std::vector<std::string>{"detach g1 a1", "detach g3 a2"}));
  g_log.clear();
}

TEST(PerCoreTakeOver, MayGoWithoutATickNoLongerThanTheLeastOfItsModules) {
  TwoCoreRun run;
  std::unique_ptr<Scheduler> unbounded = run.create(run.d.scheduler);
  EXPECT_EQ(unbounded->longest_absence_ns(), Scheduler::kNoAbsenceBound) << "neither module bounds it";
  std::string why;
  SchedulerConfig bounded_config =
      with_core_switched(run.d, 2, resolved("test_recorder", {{"generation", 3}, {"absence_us", 10}}), why);
  EXPECT_EQ(run.create(bounded_config)->longest_absence_ns(), 10'000u) << "core 2's module bounds it";
}

TEST(PerCoreTakeOver, AModuleOtherThanPerCoreIsNotTakenOver) {
  TwoCoreRun run;
  std::unique_ptr<Scheduler> running = run.create(resolved("test_recorder"));
  running->attach(*run.view);
  std::unique_ptr<Scheduler> next = run.create(run.d.scheduler);
  EXPECT_FALSE(next->take_over(*running, *run.view)) << "the run detaches it whole and attaches per_core";
  EXPECT_FALSE(running->take_over(*next, *run.view)) << "a module of its own keeps nothing";
  g_log.clear();
}

}  // namespace
}  // namespace tandem
