// The scheduler modules auto runs for its model's candidates, and per_core's verdict on a mix of them.
#include "candidate_scheduler.h"

#include "schedulers/per_core/core_choices.h"

namespace tandem::autosched {

CandidateScheduler::CandidateScheduler(const std::string& candidate)
    : name(candidate == "rtc-sleep" ? "rtc" : candidate) {
  SpecErrors errors;
  // rtc's and bubble's one worker a core runs real-time: alone on its core it has nothing to share it with, and under
  // the normal policy the kernel hands the core to whichever other task wakes there, and the packets wait meanwhile
  // (on the AMD guest rtc's p99 on heterogeneous stood above coop's, whose workers are real-time, though its median
  // was far below: docs/results/auto.md).
  json given = json::object();
  if (name == "rtc" || name == "bubble") given["policy"] = "fifo";
  if (candidate == "rtc-sleep") given["idle"] = "sleep";
  options = resolve_args(type().options, given, "scheduler", errors);
}

CandidateScheduler::CandidateScheduler(const CorePolicies& policies) : name(kPerCoreScheduler) {
  json cores = json::array();
  for (const auto& [core, candidate] : policies) {
    CandidateScheduler one(candidate);
    cores.push_back({{"core", core}, {"name", one.name}, {"options", one.options}});
  }
  SpecErrors errors;
  options = resolve_args(type().options, json{{"cores", cores}}, "scheduler", errors);
}

MixRefusal per_core_refusal(const Deployment& d) {
  return [&d](const CorePolicies& policies) -> std::optional<std::string> {
    CandidateScheduler mix(policies);
    Deployment trial = d;
    trial.scheduler = {mix.name, mix.options};
    SpecErrors errors;
    mix.type().check(trial, errors);
    if (errors.empty()) return std::nullopt;
    return errors.front().path + ": " + errors.front().message;
  };
}

bool prepared_for(const CandidateScheduler& candidate, const MachineRequirements& prepared) {
  const json have = prepared.to_json();
  const json needs = candidate.requirements().to_json();
  for (const auto& [resource, value] : needs.items())
    if (!have.contains(resource) || have[resource] != value) return false;
  return true;
}

}  // namespace tandem::autosched
