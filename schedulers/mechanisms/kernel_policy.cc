// Applying and restoring Linux scheduling policies with sched_setscheduler(2) and setpriority(2).
#include "kernel_policy.h"

#include <sched.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tandem {

KernelPolicy KernelPolicy::from_options(const std::string& name, const json& options) {
  KernelPolicy policy;
  policy.name = name;
  if (options.contains("priority")) policy.priority = options["priority"].get<int>();
  if (options.contains("nice")) policy.nice = options["nice"].get<int>();
  return policy;
}

json KernelPolicy::describe() const {
  json out = {{"policy", name}};
  if (realtime()) out["priority"] = priority;
  return out;
}

void KernelPolicy::apply(pid_t pid) const {
  if (pid <= 0) return;  // a worker that has exited (its chain removed): 0 would be this process itself
  int linux_policy = name == "fifo"    ? SCHED_FIFO
                     : name == "rr"    ? SCHED_RR
                     : name == "batch" ? SCHED_BATCH
                                       : SCHED_OTHER;
  sched_param param{};
  param.sched_priority = realtime() ? priority : 0;
  if (sched_setscheduler(pid, linux_policy, &param) != 0)
    throw std::runtime_error("sched_setscheduler(" + std::to_string(pid) + ", " + name +
                             ") failed: " + strerror(errno));
  if (!realtime() && setpriority(PRIO_PROCESS, pid, nice) != 0)
    throw std::runtime_error("setpriority(" + std::to_string(pid) + ", " + std::to_string(nice) +
                             ") failed: " + strerror(errno));
}

void KernelPolicy::restore(pid_t pid) {
  if (pid <= 0) return;
  sched_param param{};
  sched_setscheduler(pid, SCHED_OTHER, &param);
  setpriority(PRIO_PROCESS, pid, 0);
}

std::vector<ArgSpec> kernel_policy_options(const std::string& policy) {
  if (policy == "rr" || policy == "fifo") {
    std::vector<ArgSpec> options = {{.name = "priority",
                                     .type = ArgType::Integer,
                                     .default_value = 1,
                                     .help = "real-time priority of every NF",
                                     .min = 1,
                                     .max = 99}};
    if (policy == "rr")
      options.push_back({.name = "timeslice_ms",
                         .type = ArgType::Integer,
                         .default_value = 0,
                         .help = "round-robin timeslice written to /proc/sys/kernel/sched_rr_timeslice_ms for the run; "
                                 "0 keeps the machine's",
                         .min = 0,
                         .max = 1000});
    return options;
  }
  return {{.name = "nice",
           .type = ArgType::Integer,
           .default_value = 0,
           .help = "nice value of every NF",
           .min = -20,
           .max = 19}};
}

std::vector<ArgSpec> with_lone_worker_policy(std::vector<ArgSpec> options) {
  options.insert(
      options.end(),
      {{.name = "policy",
        .type = ArgType::Choice,
        .default_value = "cfs",
        .help = "the workers' kernel policy: cfs, or fifo, under which no other task on an NF core preempts them "
                "(the kernel's fair server alone lends it the core; RT throttling is lifted for the run)",
        .choices = {"cfs", "fifo"}},
       {.name = "priority",
        .type = ArgType::Integer,
        .default_value = 1,
        .help = "policy: fifo: the workers' real-time priority",
        .min = 1,
        .max = 99}});
  return options;
}

MachineRequirements lone_worker_requirements(const json& options) {
  KernelPolicy policy = KernelPolicy::from_options(options.value("policy", std::string("cfs")), options);
  return MachineRequirements().need_if(policy.realtime(), MachineResource::RtUnthrottled);
}

}  // namespace tandem
