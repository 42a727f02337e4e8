// The probe interface: a measurement the manager makes inside a run, polled from its control loop like a
// scheduler's tick. The cycle estimator, the switch-latency probe, the perf counters and the hop tracer are
// probes; a run's `profile` names its probes and their options, and the manager drives every probe the same way.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "contract/deployment.h"
#include "contract/shm_layout.h"
#include "dataplane/sink/sink.h"
#include "dataplane/traffic/generator.h"
#include "schedulers/scheduler.h"

namespace tandem {

// What the manager gives a probe: the deployment, the traffic's two ends, the live counters and the workers.
struct ProbeView {
  const Deployment& deployment;
  Generator& generator;
  Sink& sink;
  StatsZone& stats;
  const std::vector<pid_t>& worker_pids;  // by worker index; 0 once a worker has exited
  double tsc_hz;
};

class Probe {
 public:
  virtual ~Probe() = default;
  // True if the probe sends the run's packets itself: the generator's paced traffic stays off.
  virtual bool drives_traffic() const { return false; }
  // Before the workers start: shared memory they must find when they attach (the hop tracer's trace slots).
  virtual void before_workers(const Deployment& /*deployment*/) {}
  // When the control loop starts, before any packet: hooks into the traffic's two ends.
  virtual void attach(ProbeView& /*view*/) {}
  // One step, from the control loop while traffic runs.
  virtual void poll(ProbeView& /*view*/, uint64_t /*now_tsc*/) {}
  // True once the probe has what it came for: the traffic window ends then, before the run's duration.
  virtual bool finished() const { return false; }
  // True if the probe measures after the traffic, with the workers its own: the scheduler is detached first.
  virtual bool takes_workers_over() const { return false; }
  // After the traffic (only for probes that take the workers over); throws if the run cannot be measured.
  virtual void after_traffic(ProbeView& /*view*/) {}
  // What it measured, for the results' `profile` entry under the probe's name.
  virtual json report(const ProbeView& view) const = 0;
};

struct ProbeType {
  std::string name;
  std::string help;
  MachineRequirements requirements;  // what the machine must give a run with this probe, beside the scheduler's
  std::function<std::unique_ptr<Probe>(const json& options, double tsc_hz)> create;
};

const std::map<std::string, ProbeType>& probe_types();

struct ProbeRegistration {
  explicit ProbeRegistration(ProbeType type);
};

// The probes a run's `profile` names ({"estimate": {...}, ...}), by name; throws on an unknown name.
std::map<std::string, std::unique_ptr<Probe>> create_probes(const json& profile, double tsc_hz);

// What the probes a run's `profile` names need of the machine, together.
MachineRequirements probe_requirements(const json& profile);

// Every probe type with its help, for `tandem-manager --catalog`.
json probe_catalog();

}  // namespace tandem
