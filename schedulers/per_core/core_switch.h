// The scheduler a run has once one of its cores switches module: what a live switch of one core asks for.
#pragma once

#include <string>

#include "contract/deployment.h"

namespace tandem {

// `d.scheduler` with core `core` run by `chosen` (its options resolved) and every other NF core as before: per_core
// with a choice for each, or the module itself where every core would then run the same. Empty name, with `why`
// set, where it cannot be (the running per_core's options unreadable).
SchedulerConfig with_core_switched(const Deployment& d, int core, const SchedulerConfig& chosen, std::string& why);

}  // namespace tandem
