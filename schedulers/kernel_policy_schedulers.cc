// The plain kernel-policy scheduler modules cfs, batch, rr and fifo: every NF its own process under one policy.
#include "mechanisms/kernel_policy.h"
#include "scheduler.h"

namespace tandem {

namespace {

// Runs every NF as its own process under one kernel policy, without yielding: the baseline the papers beat.
class KernelPolicyScheduler final : public Scheduler {
 public:
  explicit KernelPolicyScheduler(KernelPolicy policy) : policy_(std::move(policy)) {}
  void attach(SchedulerView& view) override {
    for (pid_t pid : view.worker_pids()) policy_.apply(pid);
  }
  void detach(SchedulerView& view) override {
    for (pid_t pid : view.worker_pids()) KernelPolicy::restore(pid);
  }
  json report(const SchedulerView&) const override {
    return {{"policy", policy_.name}, {"priority", policy_.realtime() ? policy_.priority : 0}, {"nice", policy_.nice}};
  }

 private:
  KernelPolicy policy_;
};

SchedulerType kernel_policy_type(const std::string& name, const std::string& help) {
  return {
      .name = name,
      .help = help,
      .options = kernel_policy_options(name),
      .requirements =
          [name](const json& opts) {
            MachineRequirements req;
            req.need_if(KernelPolicy::is_realtime(name), MachineResource::RtUnthrottled);
            if (opts.contains("timeslice_ms") && opts["timeslice_ms"].get<int>() > 0)
              req.need(MachineResource::RrTimesliceMs, opts["timeslice_ms"].get<int>());
            return req;
          },
      .create =
          [name](const json& opts) {
            return std::make_unique<KernelPolicyScheduler>(KernelPolicy::from_options(name, opts));
          },
      .external_nfs = true,
      .kernel_io_nfs = true,
  };
}

const SchedulerRegistration cfs(kernel_policy_type("cfs",
                                                   "Kernel CFS (SCHED_OTHER), one process per NF, no yielding."));
const SchedulerRegistration batch(kernel_policy_type("batch", "Kernel SCHED_BATCH, one process per NF, no yielding."));
const SchedulerRegistration rr(kernel_policy_type("rr", "Kernel SCHED_RR, one process per NF, no yielding."));
const SchedulerRegistration fifo(
    kernel_policy_type("fifo", "Kernel SCHED_FIFO, one process per NF, no yielding: the first NF on a core keeps it."));

}  // namespace
}  // namespace tandem
