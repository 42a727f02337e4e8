// A Linux scheduling policy (SCHED_OTHER/BATCH/RR/FIFO with nice or RT priority) applied to worker processes.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "contract/arg_schema.h"
#include "schedulers/mechanisms/machine_resources.h"

namespace tandem {

struct KernelPolicy {
  std::string name;  // cfs, batch, rr or fifo
  int priority = 1;  // RT priority for rr and fifo
  int nice = 0;      // for cfs and batch

  static KernelPolicy from_options(const std::string& name, const json& options);
  // rr and fifo: the kernel runs them before any task of the normal policy, and throttles them unless told not to.
  static bool is_realtime(const std::string& policy_name) { return policy_name == "rr" || policy_name == "fifo"; }
  bool realtime() const { return is_realtime(name); }
  // The policy as a scheduler's report says it: its name, and the priority of a real-time one.
  json describe() const;
  // Applies the policy to a process; throws std::runtime_error naming the pid and the error.
  void apply(pid_t pid) const;
  // Puts a process back on SCHED_OTHER with nice 0; failures (process gone) are ignored.
  static void restore(pid_t pid);
};

// The options shared by modules that run workers under a kernel policy.
std::vector<ArgSpec> kernel_policy_options(const std::string& policy);

// A module's options, and those of its workers' policy where its one worker per core has the core to itself (rtc,
// bubble): cfs or fifo, and fifo's priority. Alone on its core the worker shares it with none of its own, but under the
// normal policy any other task the kernel wakes there (the host's, a VM's agent) preempts it while packets wait; under
// SCHED_FIFO only the kernel's fair server lends such a task the core. fifo needs RT throttling lifted
// (lone_worker_requirements).
std::vector<ArgSpec> with_lone_worker_policy(std::vector<ArgSpec> options);
MachineRequirements lone_worker_requirements(const json& options);

}  // namespace tandem
