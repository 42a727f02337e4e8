// One core's part of a run: its NFs, the rings that touch them, their chains and workers, indexed from 0 as a
// deployment of its own, with the run's index of each; what a module that schedules one core sees.
#pragma once

#include <vector>

#include "contract/deployment.h"
#include "schedulers/mechanisms/index_map.h"

namespace tandem {

struct CoreSlice {
  int core = 0;
  // The core's NFs with their rings and chains: a ring to or from another core's NF is an edge of the part (its
  // other end -1, as the generator's and the sink's are), and each chain keeps only its NFs on the core.
  Deployment deployment;
  IndexMap map;  // the run's index of each of the part's
};

// The part of `run` on `core`; its workers are those of run.workers on the core (none before they are planned).
// Throws std::logic_error for a worker on the core that runs another core's NF.
CoreSlice slice_of_core(const Deployment& run, int core);

// Worker plans made on `slice.deployment`, with the run's NF and ring indexes; their own indexes and lcores are the
// caller's to number.
std::vector<WorkerPlan> plans_in_run(const CoreSlice& slice, std::vector<WorkerPlan> plans);

}  // namespace tandem
