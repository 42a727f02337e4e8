// What auto runs for a candidate of its model: the scheduler module and options of a policy (rtc's and bubble's
// worker under SCHED_FIFO; "rtc-sleep" is that rtc with idle: sleep), or per_core with each core's candidate; and
// whether per_core accepts such a mix for a run.
#pragma once

#include <memory>
#include <string>

#include "core_decision.h"
#include "schedulers/scheduler.h"

namespace tandem::autosched {

struct CandidateScheduler {
  std::string name;
  json options;  // resolved: every option the candidate does not set at its default

  explicit CandidateScheduler(const std::string& candidate);
  // per_core, each core running its candidate.
  explicit CandidateScheduler(const CorePolicies& policies);
  static CandidateScheduler of(const std::string& policy, const CorePolicies& core_policies) {
    return core_policies.empty() ? CandidateScheduler(policy) : CandidateScheduler(core_policies);
  }

  const SchedulerType& type() const { return scheduler_types().at(name); }
  std::unique_ptr<Scheduler> create() const { return type().create(options); }
  MachineRequirements requirements() const { return type().requirements(options); }
};

// Why per_core refuses a mix for `d` as its check would (the field, then what is wrong); `d` outlives the answer.
MixRefusal per_core_refusal(const Deployment& d);

// Whether every need of `candidate` (with its defaults) is among what the run was prepared for.
bool prepared_for(const CandidateScheduler& candidate, const MachineRequirements& prepared);

}  // namespace tandem::autosched
