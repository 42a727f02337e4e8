// Applying and restoring Linux scheduling policies with sched_setscheduler(2) and setpriority(2);
// registers the plain kernel-policy scheduler modules cfs, batch, rr and fifo.
#include "kernel_policy.h"

#include <sched.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "scheduler.h"

namespace tandem {

KernelPolicy KernelPolicy::from_options(const std::string& name, const json& options) {
  KernelPolicy policy;
  policy.name = name;
  if (options.contains("priority")) policy.priority = options["priority"].get<int>();
  if (options.contains("nice")) policy.nice = options["nice"].get<int>();
  return policy;
}

void KernelPolicy::apply(pid_t pid) const {
  int linux_policy = name == "fifo" ? SCHED_FIFO : name == "rr" ? SCHED_RR : name == "batch" ? SCHED_BATCH : SCHED_OTHER;
  sched_param param{};
  param.sched_priority = realtime() ? priority : 0;
  if (sched_setscheduler(pid, linux_policy, &param) != 0)
    throw std::runtime_error("sched_setscheduler(" + std::to_string(pid) + ", " + name + ") failed: " + strerror(errno));
  if (!realtime() && setpriority(PRIO_PROCESS, pid, nice) != 0)
    throw std::runtime_error("setpriority(" + std::to_string(pid) + ", " + std::to_string(nice) + ") failed: " + strerror(errno));
}

void KernelPolicy::restore(pid_t pid) {
  if (pid <= 0) return;
  sched_param param{};
  sched_setscheduler(pid, SCHED_OTHER, &param);
  setpriority(PRIO_PROCESS, pid, 0);
}

std::vector<ArgSpec> kernel_policy_options(const std::string& policy) {
  if (policy == "rr" || policy == "fifo") {
    std::vector<ArgSpec> options = {
        {.name = "priority", .type = ArgType::Integer, .default_value = 1, .help = "real-time priority of every NF", .min = 1, .max = 99}};
    if (policy == "rr")
      options.push_back({.name = "timeslice_ms", .type = ArgType::Integer, .default_value = 0,
                         .help = "round-robin timeslice written to /proc/sys/kernel/sched_rr_timeslice_ms for the run; "
                                 "0 keeps the machine's",
                         .min = 0, .max = 1000});
    return options;
  }
  return {{.name = "nice", .type = ArgType::Integer, .default_value = 0, .help = "nice value of every NF", .min = -20, .max = 19}};
}

namespace {

// Runs every NF as its own process under one kernel policy, without yielding: the baseline the papers beat.
class KernelPolicyScheduler final : public Scheduler {
 public:
  explicit KernelPolicyScheduler(KernelPolicy policy) : policy_(std::move(policy)) {}
  void attach(SchedulerView& view) override {
    for (pid_t pid : view.worker_pids) policy_.apply(pid);
  }
  void detach(SchedulerView& view) override {
    for (pid_t pid : view.worker_pids) KernelPolicy::restore(pid);
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
            req.rt_unthrottled = name == "rr" || name == "fifo";
            if (opts.contains("timeslice_ms") && opts["timeslice_ms"].get<int>() > 0) req.rr_timeslice_ms = opts["timeslice_ms"].get<int>();
            return req;
          },
      .create = [name](const json& opts) { return std::make_unique<KernelPolicyScheduler>(KernelPolicy::from_options(name, opts)); },
      .external_nfs = true,
  };
}

const SchedulerRegistration cfs(kernel_policy_type("cfs", "Kernel CFS (SCHED_OTHER), one process per NF, no yielding."));
const SchedulerRegistration batch(kernel_policy_type("batch", "Kernel SCHED_BATCH, one process per NF, no yielding."));
const SchedulerRegistration rr(kernel_policy_type("rr", "Kernel SCHED_RR, one process per NF, no yielding."));
const SchedulerRegistration fifo(kernel_policy_type(
    "fifo", "Kernel SCHED_FIFO, one process per NF, no yielding: the first NF on a core keeps it."));

}  // namespace
}  // namespace tandem
