// rtc: the run-to-completion ceiling: all NFs placed on one core run as consecutive calls in one process.
#include "mechanisms/kernel_policy.h"
#include "scheduler.h"

namespace tandem {
namespace {

class RunToCompletion final : public Scheduler {
 public:
  // One worker per core; on it, each maximal run of consecutive NFs of a chain becomes one segment.
  std::vector<WorkerPlan> plan_workers(const Deployment& deployment) const override {
    std::vector<WorkerPlan> plans;
    auto worker_for_core = [&](int core) -> WorkerPlan& {
      for (WorkerPlan& plan : plans)
        if (plan.core == core) return plan;
      WorkerPlan plan;
      plan.index = static_cast<int>(plans.size());
      plan.name = "rtc@core" + std::to_string(core);
      plan.core = core;
      plan.lcore_id = plan.index + 1;
      plans.push_back(plan);
      return plans.back();
    };
    for (const ChainConfig& chain : deployment.chains) {
      size_t i = 0;
      while (i < chain.nfs.size()) {
        int core = deployment.nfs[chain.nfs[i]].core;
        Segment segment{chain.rings[i], {}, 0};
        while (i < chain.nfs.size() && deployment.nfs[chain.nfs[i]].core == core) segment.nfs.push_back(chain.nfs[i++]);
        segment.out_ring = chain.rings[i];
        worker_for_core(core).segments.push_back(segment);
      }
    }
    return plans;
  }
  void attach(SchedulerView& view) override {
    for (pid_t pid : view.worker_pids()) KernelPolicy::restore(pid);  // plain SCHED_OTHER: each is alone on its core
  }
  void detach(SchedulerView&) override {}
  json report(const SchedulerView& view) const override { return {{"policy", "cfs"}, {"workers", view.worker_pids().size()}}; }
};

const SchedulerRegistration registration({
    .name = "rtc",
    .help = "Run-to-completion ceiling: the NFs on a core run as consecutive function calls in one process.",
    .options = {},
    .requirements = [](const json&) { return MachineRequirements{}; },
    .create = [](const json&) { return std::make_unique<RunToCompletion>(); },
});

}  // namespace
}  // namespace tandem
