// per_core's options: which scheduler module, with which options, runs each core.
#pragma once

#include <string>
#include <vector>

#include "contract/arg_schema.h"
#include "contract/deployment.h"

namespace tandem {

inline constexpr const char* kPerCoreScheduler = "per_core";
inline constexpr long long kMaxCoreNumber = 4095;  // the highest core a choice or a one-core switch may name

struct CoreChoice {
  int core = 0;
  SchedulerConfig scheduler;  // its options resolved, with defaults
};

// The choices in per_core's `cores` option ([{core: N, name: SCHEDULER, options: {...}}, ...]), each checked: a
// known module that schedules one core on its own (not per_core itself, nor auto), its options, no core twice.
// Errors are named from `path` ("scheduler.cores[1].name").
std::vector<CoreChoice> core_choices(const json& cores, const std::string& path, SpecErrors& errors);

// The option that gives these choices back.
json cores_option(const std::vector<CoreChoice>& choices);

}  // namespace tandem
