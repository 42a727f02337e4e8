// auto's choice per core: where a run's NF cores are each best served by a different candidate, every core its own
// (per_core), when the model predicts that better than any one candidate on every core.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "policy_model.h"

namespace tandem::autosched {

// The part of `workload` that runs on `core`: its NFs, and the chains they belong to (renumbered, in order).
Workload core_part(const Workload& workload, int core);

// Each NF core's own choice, decide() over its part alone; nothing where a kernel-I/O NF runs (scc's model is the
// whole run's), the run has one NF core, or every core chooses alike.
CorePolicies choices_per_core(const Workload& workload, Objective objective, std::optional<double> slo_p99_us,
                              const SwitchCosts& costs, const std::vector<std::string>& allowed);

// A mix's name in decisions and reports: "per_core (core 1 unis, core 2 rtc)".
std::string mix_name(const CorePolicies& policies);

// Why a mix of policies per core cannot run (per_core's check refusing it: the field, then what is wrong), or
// nothing where it can.
using MixRefusal = std::function<std::optional<std::string>(const CorePolicies&)>;

// decide() for the whole run, and for each NF core alone. Where the cores' choices differ, and their mix is
// predicted better than the whole run's choice by more than `margin` (a fraction) and meets the SLO, the decision
// is per_core with each core's choice, its prediction added to the others; otherwise the whole run's decision, its
// reason saying what the mix was predicted. Kernel-I/O NFs and a single NF core: the whole run's decision. A mix
// that `refusal` refuses gives the whole run's decision too, its reason saying why.
Decision decide_per_core(const Workload& workload, Objective objective, std::optional<double> slo_p99_us,
                         const SwitchCosts& costs, const std::vector<std::string>& allowed, double margin,
                         const MixRefusal& refusal = {});

}  // namespace tandem::autosched
