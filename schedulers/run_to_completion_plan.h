// Run-to-completion worker plans: one process per core whose NFs run as consecutive calls (rtc, and hybrid's
// native worker).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "contract/deployment.h"

namespace tandem {

// The NF whose only output is `nf`'s only input, unlabelled and on the same core: the two can be consecutive calls
// of one segment. -1 where there is none.
int consecutive_feeder(const Deployment& deployment, const NfConfig& nf);

// One worker per core for the NFs that `joins` accepts, named `name_prefix` + core; on it, each maximal run of
// such NFs of a chain joined by single edges becomes one segment (a packet goes through it without a ring). The
// plans are indexed from `first_index` in the order their cores are first met along the chains.
std::vector<WorkerPlan> run_to_completion_workers(const Deployment& deployment,
                                                  const std::function<bool(const NfConfig&)>& joins,
                                                  const std::string& name_prefix, int first_index = 0);

}  // namespace tandem
