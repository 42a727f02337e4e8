// The catalog: the NF types and scheduler modules this build registered, and the checks a deployment must pass.
#pragma once

#include "contract/deployment.h"
#include "schedulers/scheduler.h"

namespace tandem {

// Every NF type and scheduler module with its help and declared arguments (`tandem-manager --catalog`).
json catalog_json();

// Checks every NF's arguments and the scheduler's options against the schemas their catalog entries declare, and
// what a run holds at once (NFs, rings and chains; the lcore ids its processes need). `deployment` gets resolved
// arguments (defaults filled in). A service's chain added live is checked with its chains, `chain_removed` (by
// index) not counted as running: its own lcore ids are given where the processes start (give_lcore_ids).
SpecErrors check_deployment(Deployment& deployment, const std::vector<bool>& chain_removed = {});

// What `tandem-manager --check` answers: the problems, or the machine the run needs (the scheduler's
// requirements with `more` of its own, e.g. its probes', and hugepages) and the scheduler's resolved options.
json check_report(Deployment& deployment, const MachineRequirements& more);

}  // namespace tandem
