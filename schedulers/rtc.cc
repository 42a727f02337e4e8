// rtc: the run-to-completion ceiling: all NFs placed on one core run as consecutive calls in one process.
#include "mechanisms/kernel_policy.h"
#include "scheduler.h"

namespace tandem {
namespace {

class RunToCompletion final : public Scheduler {
 public:
  // One worker per core; on it, each maximal run of NFs of a chain joined by single edges becomes one segment.
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
    // Along the graph in topological order: a segment goes on to the next NF while the edge to it is the only
    // way out of the last and the only way into the next, and the next shares the core.
    std::vector<bool> placed(deployment.nfs.size(), false);
    for (const ChainConfig& chain : deployment.chains)
      for (int first : chain.nfs) {
        if (placed[first]) continue;
        std::vector<int> nfs = {first};
        placed[first] = true;
        while (true) {
          const NfConfig& last = deployment.nfs[nfs.back()];
          if (last.out_rings.size() != 1 || !deployment.rings[last.out_rings[0]].label.empty()) break;
          int next = deployment.rings[last.out_rings[0]].to;
          if (next < 0 || placed[next] || deployment.nfs[next].in_rings.size() != 1 ||
              deployment.nfs[next].core != last.core)
            break;
          nfs.push_back(next);
          placed[next] = true;
        }
        worker_for_core(deployment.nfs[first].core).segments.push_back(segment_of(deployment.nfs, nfs));
      }
    return plans;
  }
  void attach(SchedulerView& view) override {
    for (pid_t pid : view.worker_pids()) KernelPolicy::restore(pid);  // plain SCHED_OTHER: each is alone on its core
  }
  void detach(SchedulerView&) override {}
  json report(const SchedulerView& view) const override {
    return {{"policy", "cfs"}, {"workers", view.worker_pids().size()}};
  }
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
