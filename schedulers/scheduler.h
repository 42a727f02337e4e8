// The scheduler module interface: plan workers, attach to a deployment, tick periodically, detach and restore.
// Like Caladan's sched_ops, every scheduler (kernel policies, cooperative, run-to-completion, and later
// UNiS, NFVnice, Bubble) implements this one interface, and the manager drives it from its control loop.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <rte_ring.h>

#include "contract/deployment.h"
#include "contract/shm_layout.h"
#include "schedulers/mechanisms/worker_hints.h"

namespace tandem {

// What the manager gives a scheduler module: the deployment, its live counters, rings and worker pids, and the
// hints by which it steers the workers (schedulers/mechanisms/worker_hints.h).
struct SchedulerView {
  const Deployment& deployment;
  const StatsZone& stats;
  std::vector<rte_ring*>& rings;
  std::vector<pid_t>& worker_pids;  // by worker index; 0 once a worker has exited
  WorkerHints hints;
};

// Machine-wide settings a scheduler needs; the control plane applies them and restores them on every exit path.
struct MachineRequirements {
  bool rt_unthrottled = false;               // sched_rt_runtime_us = -1, or busy RT tasks stall 50 ms a second
  std::optional<int> rr_timeslice_ms = std::nullopt;  // /proc/sys/kernel/sched_rr_timeslice_ms
  bool cgroup_v2_dir = false;  // a cgroup v2 directory for the run (paths.cgroup_dir), removed with everything in it
  bool cycle_costs = false;    // every NF's cost_cycles, from the cycle estimator or the spec
  bool cgroup_v1_cpu_dir = false;  // a cgroup v1 `cpu` directory for the run (paths.cpu_cgroup_dir), removed likewise

  // Both sets of needs at once (a scheduler's and a probe's); of two RR timeslices, the first given.
  MachineRequirements& operator|=(const MachineRequirements& other) {
    rt_unthrottled |= other.rt_unthrottled;
    if (!rr_timeslice_ms) rr_timeslice_ms = other.rr_timeslice_ms;
    cgroup_v2_dir |= other.cgroup_v2_dir;
    cycle_costs |= other.cycle_costs;
    cgroup_v1_cpu_dir |= other.cgroup_v1_cpu_dir;
    return *this;
  }
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // Which NFs share a worker process. The default is one process per NF.
  virtual std::vector<WorkerPlan> plan_workers(const Deployment& deployment) const;
  // Called once every worker is attached and waiting, before they start polling.
  virtual void attach(SchedulerView& view) = 0;
  // Period of tick() in nanoseconds; 0 = the module needs no periodic work.
  virtual uint64_t tick_period_ns() const { return 0; }
  virtual void tick(SchedulerView& /*view*/, uint64_t /*now_tsc*/) {}
  // Called before the workers are stopped, also after an error: undo everything attach() and tick() did.
  virtual void detach(SchedulerView& view) = 0;
  // True while the module deliberately keeps a worker from running (parked, stopped, frozen): its idle
  // heartbeat is then neither a hang nor starvation.
  virtual bool holds(size_t /*worker*/) const { return false; }
  // What the module did, for the results (e.g. policy applied, yields).
  virtual json report(const SchedulerView& /*view*/) const { return json::object(); }
};

struct SchedulerType {
  std::string name;
  std::string help;
  std::vector<ArgSpec> options;
  std::function<MachineRequirements(const json& options)> requirements;
  // Checks of the resolved options against the deployment (ring capacities, NF costs, the machine); optional.
  std::function<void(const Deployment& deployment, SpecErrors& errors)> check = nullptr;
  std::function<std::unique_ptr<Scheduler>(const json& options)> create;
  // Whether `external` NFs (unmodified applications in their own process) can run under this module: only
  // modules that schedule processes from outside can; those that need the worker's cooperation cannot.
  bool external_nfs = false;
};

const std::map<std::string, SchedulerType>& scheduler_types();

struct SchedulerRegistration {
  explicit SchedulerRegistration(SchedulerType type);
};

// One worker process per NF, each segment a single NF: the shape every scheduler but rtc and bubble uses.
// An external NF's plan is its application's process.
std::vector<WorkerPlan> one_worker_per_nf(const Deployment& deployment);

}  // namespace tandem
