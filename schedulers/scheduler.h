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
#include "schedulers/mechanisms/cgroup_work_queue.h"
#include "schedulers/mechanisms/index_map.h"
#include "schedulers/mechanisms/machine_resources.h"
#include "schedulers/mechanisms/worker_hints.h"

namespace tandem {

// What the manager gives a scheduler module: the deployment, read access to the run's counters, rings and
// worker processes, and the hints by which it steers the workers (schedulers/mechanisms/worker_hints.h). A
// module reads through these methods and never writes the stats zone itself.
class SchedulerView {
 public:
  SchedulerView(const Deployment& deployment, const StatsZone& stats, const std::vector<rte_ring*>& rings,
                const std::vector<pid_t>& worker_pids, WorkerHints hints, CgroupWorkQueue* cgroup_work = nullptr)
      : deployment(deployment),
        hints(hints),
        stats_(stats),
        rings_(rings),
        worker_pids_(worker_pids),
        cgroup_work_(cgroup_work) {}
  // The view of a module that sees part of `run` (one core's, schedulers/per_core/): `part` is that part of the
  // deployment with indexes of its own, `map` their run's indexes, `rings` and `worker_pids` the run's at them.
  SchedulerView(const Deployment& part, const SchedulerView& run, IndexMap map, const std::vector<rte_ring*>& rings,
                const std::vector<pid_t>& worker_pids)
      : deployment(part),
        hints(run.hints.sliced(map)),
        stats_(run.stats_),
        rings_(rings),
        worker_pids_(worker_pids),
        cgroup_work_(run.cgroup_work_),
        map_(std::move(map)) {}

  const Deployment& deployment;
  WorkerHints hints;

  const NfCounters& nf_counters(int nf) const { return stats_.nfs[map_.nf(nf)]; }
  const RingCounters& ring_counters(int ring) const { return stats_.rings[map_.ring(ring)]; }
  // Packets offered to an NF so far: what its in-rings accepted or refused (a join has several).
  uint64_t arrivals(int nf) const {
    uint64_t offered = 0;
    for (int ring : deployment.nfs[nf].in_rings)
      offered += counter_read(ring_counters(ring).enqueued) + counter_read(ring_counters(ring).dropped_full);
    return offered;
  }
  // Packets waiting in an NF's in-rings now.
  unsigned waiting(int nf) const {
    unsigned packets = 0;
    for (int ring : deployment.nfs[nf].in_rings) packets += rte_ring_count(rings_[ring]);
    return packets;
  }
  const std::vector<rte_ring*>& rings() const { return rings_; }  // what a module that watches occupancy samples
  // Loop iterations of a worker so far (the address, for a measurement that waits for it to move).
  const uint64_t& heartbeat(int worker) const { return stats_.workers[map_.worker(worker)].heartbeat; }
  // Whether an NF has new arguments waiting that it has neither taken nor refused: a live change that its runtime takes
  // only by running (dataplane/runtimes/live_args.h), even with no packet to process.
  bool live_change_waiting(int nf) const {
    const NfControl& control = stats_.nf_control[map_.nf(nf)];
    uint32_t wanted = flag_load(control.args_wanted);
    return wanted != flag_load(control.args_running) && wanted != flag_load(control.args_refused);
  }
  // Packets the generator shed at a chain's closed entry so far.
  uint64_t entry_backpressure(int chain) const {
    return counter_read(stats_.chains[map_.chain(chain)].entry_backpressure);
  }
  // By worker index; 0 once a worker has exited.
  const std::vector<pid_t>& worker_pids() const { return worker_pids_; }
  // The run's cgroup work queue, where a module makes, fills and removes cgroups away from the control loop; null
  // where nothing runs one (a test's view).
  CgroupWorkQueue* cgroup_work() const { return cgroup_work_; }

 private:
  const StatsZone& stats_;
  const std::vector<rte_ring*>& rings_;
  const std::vector<pid_t>& worker_pids_;
  CgroupWorkQueue* cgroup_work_;
  IndexMap map_;
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
  // How long the module may go without a tick now: the control loop's naps for idle work beside the traffic (a
  // process starting, a build) end within it (dataplane/run/idle_work_naps.h). The default bounds nothing: a module
  // whose ticks only steer loses no packet for a late one.
  virtual uint64_t longest_absence_ns() const { return kNoAbsenceBound; }
  static constexpr uint64_t kNoAbsenceBound = UINT64_MAX;
  // Called before the workers are stopped, also after an error: undo everything attach() and tick() did.
  virtual void detach(SchedulerView& view) = 0;
  // A live switch that keeps the processes: instead of `running`'s detach and this one's attach, takes over from
  // `running` (attached to `view`) what stays as it is, detaching the rest and attaching what is new; true if it did.
  // The default keeps nothing (false): the run then detaches `running` whole and attaches this one. per_core keeps
  // the modules of the cores that the switch leaves as they were.
  virtual bool take_over(Scheduler& /*running*/, SchedulerView& /*view*/) { return false; }
  // True while the module deliberately keeps a worker from running (parked, stopped, frozen): its idle
  // heartbeat is then neither a hang nor starvation.
  virtual bool holds(size_t /*worker*/) const { return false; }
  // What the module did, for the results (e.g. policy applied, yields).
  virtual json report(const SchedulerView& /*view*/) const { return json::object(); }
  // Its decisions so far, as numbers for live metrics (run --metrics), cheap enough for every 250 ms:
  // {"nfs": {NF: {metric: number}}, "totals": {metric: number}}. A metric named *_total only grows (a counter);
  // any other is a current value (a gauge).
  virtual json live_metrics(const SchedulerView& /*view*/) const { return json::object(); }
  // A module that would do better with the NFs in other processes (auto, choosing a policy of another layout) asks
  // the run to re-lay them out (dataplane/run/run_relayout.cc): the run detaches it, drains the NFs, calls
  // relayout_begins, starts the workers its plan_workers answers then and attaches it again; or, where it cannot,
  // calls relayout_refused with why (attached again as it was).
  virtual bool wants_relayout() const { return false; }
  // The workers plan_workers will answer once relayout_begins, asked before the NFs drain: the run starts them
  // beside the running ones meanwhile (and starts them anew should the plan then differ). Nothing where the module
  // cannot tell before.
  virtual std::optional<std::vector<WorkerPlan>> planned_relayout(const Deployment& /*deployment*/) const {
    return std::nullopt;
  }
  virtual void relayout_begins(const Deployment& /*deployment*/) {}
  virtual void relayout_refused(const std::string& /*why*/) {}
};

struct SchedulerType {
  std::string name;
  std::string help;
  std::vector<ArgSpec> options;
  std::function<MachineRequirements(const json& options)> requirements;
  // Where what the run needs depends on its NFs as well as the options (auto: what the policies its NFs allow
  // need): given, it answers for the deployment instead of `requirements`.
  std::function<MachineRequirements(const Deployment& deployment)> deployment_requirements = nullptr;
  // Checks of the resolved options against the deployment (ring capacities, NF costs, the machine); optional.
  std::function<void(const Deployment& deployment, SpecErrors& errors)> check = nullptr;
  std::function<std::unique_ptr<Scheduler>(const json& options)> create;
  // Whether `external` NFs (unmodified applications in their own process) can run under this module: only
  // modules that schedule processes from outside can; those that need the worker's cooperation cannot.
  bool external_nfs = false;
  // Whether kernel-I/O chains (`io: kernel`) can run under this module: it schedules their processes without
  // watching rings (kernel links have none) and without the worker's cooperation.
  bool kernel_io_nfs = false;
};

const std::map<std::string, SchedulerType>& scheduler_types();

// What a run of `deployment` under its scheduler (`type`, with the deployment's resolved options) needs.
MachineRequirements scheduler_requirements(const SchedulerType& type, const Deployment& deployment);

struct SchedulerRegistration {
  explicit SchedulerRegistration(SchedulerType type);
};

// One worker process per NF, each segment a single NF: the shape every scheduler but rtc and bubble uses.
// An external NF's plan is its application's process.
std::vector<WorkerPlan> one_worker_per_nf(const Deployment& deployment);

}  // namespace tandem
