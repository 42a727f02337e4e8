// per_core: each core its own scheduler module (rtc on one, UNiS on another), each seeing only its core's NFs,
// rings and workers with indexes of its own (core_slice.h), so any module runs unchanged beside the others.
#include <rte_cycles.h>

#include <algorithm>
#include <map>
#include <memory>

#include "core_choices.h"
#include "core_slice.h"
#include "schedulers/scheduler.h"

namespace tandem {
namespace {

// The part of the run `choice`'s module runs, as that module's own deployment.
CoreSlice part_of(const Deployment& d, const CoreChoice& choice) {
  CoreSlice slice = slice_of_core(d, choice.core);
  slice.deployment.scheduler = choice.scheduler;
  return slice;
}

// A core's module attached to its part of the run: its view reads the run's counters through the part's indexes.
struct AttachedCore {
  CoreSlice slice;
  std::vector<rte_ring*> rings;
  std::vector<pid_t> pids;  // the run's worker pids at the part's workers, refreshed before each call
  std::unique_ptr<SchedulerView> view;
  uint64_t last_tick = 0;
};

struct CoreModule {
  CoreChoice choice;
  std::unique_ptr<Scheduler> module;
  std::unique_ptr<AttachedCore> attached;  // since attached, where the core holds NFs
};

class PerCoreScheduler final : public Scheduler {
 public:
  explicit PerCoreScheduler(const std::vector<CoreChoice>& choices) {
    for (const CoreChoice& choice : choices)
      cores_.push_back({choice, scheduler_types().at(choice.scheduler.name).create(choice.scheduler.options), {}});
  }

  std::vector<WorkerPlan> plan_workers(const Deployment& d) const override {
    std::vector<WorkerPlan> plans;
    std::set<int> cores = nf_cores(d);
    for (const CoreModule& core : cores_) {
      if (!cores.count(core.choice.core)) continue;
      CoreSlice slice = part_of(d, core.choice);
      for (WorkerPlan& plan : plans_in_run(slice, core.module->plan_workers(slice.deployment)))
        plans.push_back(std::move(plan));
    }
    // The running workers keep their places, in their order (a chain added live: its workers come after).
    plans = in_running_order(std::move(plans), d.workers);
    return plans;
  }

  void attach(SchedulerView& view) override {
    std::set<int> cores = nf_cores(view.deployment);
    for (CoreModule& core : cores_) {
      core.attached.reset();
      if (cores.count(core.choice.core)) attach_core(core, view);
    }
  }

  // One core's switch (or several): the cores whose module and options stay keep their attached module, state and
  // all, so that their NFs see nothing of it; the others' modules are detached, their hints made neutral, and the new
  // ones attached.
  bool take_over(Scheduler& running, SchedulerView& view) override {
    auto* before = dynamic_cast<PerCoreScheduler*>(&running);
    if (before == nullptr) return false;
    for (CoreModule& core : cores_) {
      core.attached.reset();
      for (CoreModule& old : before->cores_)
        if (old.attached && old.choice.core == core.choice.core && old.choice.scheduler == core.choice.scheduler) {
          core.module = std::move(old.module);
          core.attached = std::move(old.attached);
        }
    }
    for (CoreModule& old : before->cores_) {
      if (!old.attached) continue;
      refresh_pids(*old.attached, view);
      old.module->detach(*old.attached->view);
      old.attached->view->hints.neutral(old.attached->slice.deployment.workers.size(),
                                        old.attached->slice.deployment.chains.size());
      old.attached.reset();
    }
    std::set<int> cores = nf_cores(view.deployment);
    for (CoreModule& core : cores_)
      if (!core.attached && cores.count(core.choice.core)) attach_core(core, view);
    return true;
  }

  uint64_t tick_period_ns() const override {
    uint64_t period = 0;
    for (const CoreModule& core : cores_)
      if (uint64_t p = core.module->tick_period_ns(); p > 0) period = period == 0 ? p : std::min(period, p);
    return period;
  }

  uint64_t longest_absence_ns() const override {
    uint64_t longest = kNoAbsenceBound;
    for (const CoreModule& core : cores_) longest = std::min(longest, core.module->longest_absence_ns());
    return longest;
  }

  void tick(SchedulerView& view, uint64_t now_tsc) override {
    double cycles_per_ns = static_cast<double>(rte_get_tsc_hz()) * 1e-9;
    for (CoreModule& core : cores_) {
      uint64_t period = core.module->tick_period_ns();
      if (!core.attached || period == 0) continue;
      AttachedCore& attached = *core.attached;
      if (now_tsc - attached.last_tick < static_cast<uint64_t>(static_cast<double>(period) * cycles_per_ns)) continue;
      attached.last_tick = now_tsc;
      refresh_pids(attached, view);
      core.module->tick(*attached.view, now_tsc);
    }
  }

  void detach(SchedulerView& view) override {
    for (CoreModule& core : cores_) {
      if (!core.attached) continue;
      refresh_pids(*core.attached, view);
      core.module->detach(*core.attached->view);  // its part kept: the run asks for its report after
    }
  }

  bool holds(size_t worker) const override {
    for (const CoreModule& core : cores_) {
      if (!core.attached) continue;
      int local = core.attached->slice.map.local_worker(static_cast<int>(worker));
      if (local >= 0) return core.module->holds(static_cast<size_t>(local));
    }
    return false;
  }

  json report(const SchedulerView& view) const override {
    json cores = json::array();
    for (const CoreModule& core : cores_) {
      json entry = {{"core", core.choice.core},
                    {"scheduler", core.choice.scheduler.name},
                    {"options", core.choice.scheduler.options}};
      if (core.attached) {
        refresh_pids(*core.attached, view);
        entry["report"] = core.module->report(*core.attached->view);
      }
      cores.push_back(entry);
    }
    return {{"cores", cores}};
  }

  // The modules' NF metrics together (NF names are the run's); their totals by core: core1_switches_total.
  json live_metrics(const SchedulerView& view) const override {
    json nfs = json::object(), totals = json::object();
    for (const CoreModule& core : cores_) {
      if (!core.attached) continue;
      refresh_pids(*core.attached, view);
      json metrics = core.module->live_metrics(*core.attached->view);
      // Each named first: a range-for over value(...).items() iterates a temporary destroyed before the loop runs
      // (the manager's loop spun there in the many-core VM, reading freed memory).
      const json core_nfs = metrics.value("nfs", json::object());
      const json core_totals = metrics.value("totals", json::object());
      for (const auto& [nf, values] : core_nfs.items()) nfs[nf] = values;
      for (const auto& [name, value] : core_totals.items())
        totals["core" + std::to_string(core.choice.core) + "_" + name] = value;
    }
    return {{"nfs", nfs}, {"totals", totals}};
  }

 private:
  void attach_core(CoreModule& core, SchedulerView& view) {
    auto attached = std::make_unique<AttachedCore>();
    attached->slice = part_of(view.deployment, core.choice);
    for (int ring : attached->slice.map.rings) attached->rings.push_back(view.rings()[static_cast<size_t>(ring)]);
    refresh_pids(*attached, view);
    attached->view = std::make_unique<SchedulerView>(attached->slice.deployment, view, attached->slice.map,
                                                     attached->rings, attached->pids);
    core.module->attach(*attached->view);
    attached->last_tick = rte_get_tsc_cycles();
    core.attached = std::move(attached);
  }

  // Workers restart under new pids, and an exited one has 0: the part's are read from the run's before each call.
  static void refresh_pids(AttachedCore& attached, const SchedulerView& run) {
    attached.pids.resize(attached.slice.map.workers.size());
    for (size_t w = 0; w < attached.pids.size(); w++)
      attached.pids[w] = run.worker_pids()[static_cast<size_t>(attached.slice.map.workers[w])];
  }

  std::vector<CoreModule> cores_;
};

std::vector<CoreChoice> choices_of(const json& options) {
  SpecErrors errors;
  return core_choices(options.value("cores", json()), "scheduler.cores", errors);  // checked before (check_per_core)
}

// Every NF core has a choice, and each core's module can run its NFs as they are.
void check_per_core(const Deployment& d, SpecErrors& errors) {
  std::vector<CoreChoice> choices = core_choices(d.scheduler.options.value("cores", json()), "scheduler.cores", errors);
  if (!errors.empty()) return;
  std::map<int, const CoreChoice*> by_core;
  for (const CoreChoice& choice : choices) by_core[choice.core] = &choice;
  for (int core : nf_cores(d)) {
    auto found = by_core.find(core);
    if (found == by_core.end()) {
      errors.push_back({"scheduler.cores", "core " + std::to_string(core) + " holds NFs and has no scheduler: add " +
                                               "{core: " + std::to_string(core) + ", name: SCHEDULER}"});
      continue;
    }
    const CoreChoice& choice = *found->second;
    const SchedulerType& type = scheduler_types().at(choice.scheduler.name);
    CoreSlice slice = part_of(d, choice);
    for (const NfConfig& nf : slice.deployment.nfs)
      if ((nf.external() && !type.external_nfs) || (nf.kernel_io && !type.kernel_io_nfs))
        errors.push_back({nf.spec_path + ".core", choice.scheduler.name + " runs core " + std::to_string(core) +
                                                      " and cannot schedule NF '" + nf.name + "' there"});
    if (type.check) type.check(slice.deployment, errors);
  }
}

const SchedulerRegistration registration({
    .name = kPerCoreScheduler,
    .help = "Each core its own scheduler: cores: [{core: N, name: SCHEDULER, options: {...}}, ...], one per NF core "
            "(any module but auto, which decides for every core itself).",
    .options = {{.name = "cores",
                 .type = ArgType::List,
                 .default_value = nullptr,
                 .help = "each NF core's scheduler module and its options: [{core: N, name: rtc, options: {}}]"}},
    .requirements =
        [](const json& options) {
          MachineRequirements needs;
          for (const CoreChoice& choice : choices_of(options))
            needs |= scheduler_types().at(choice.scheduler.name).requirements(choice.scheduler.options);
          return needs;
        },
    .check = check_per_core,
    .create = [](const json& options) { return std::make_unique<PerCoreScheduler>(choices_of(options)); },
    .external_nfs = true,  // where its core's module can (check_per_core)
    .kernel_io_nfs = true,
});

}  // namespace
}  // namespace tandem
