// EAL command lines for the manager (primary) and its workers (secondaries) of one run.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "deployment.h"

namespace tandem {

// Every process gets its own lcore id mapped to its core: mempool caches are indexed by lcore id in
// shared memory, and two processes with one id would corrupt them.
std::vector<std::string> primary_eal_args(const Deployment& deployment);
std::vector<std::string> secondary_eal_args(const Deployment& deployment, const WorkerPlan& worker);

// In a child, before it executes a secondary (a worker or an external NF's application): turns off
// address-space randomisation for that process alone. A secondary maps the primary's hugepage memory at the
// primary's addresses; a library or stack that randomisation happens to place there makes its EAL fail
// ("Cannot init EAL: Cannot allocate memory"), DPDK's multi-process guide says as much. Per process
// (personality(2)), so nothing on the machine changes and nothing needs undoing.
void without_address_randomisation();

// Before rte_eal_init: confines this process, and every process it then starts (affinity is inherited across
// fork and exec), to the control core. EAL pins each lcore thread where --lcores says, but places its control
// threads (interrupts, the multi-process IPC handler that secondaries' requests wait on) on the process's
// initial CPUs minus its lcores' ones: left alone, the manager's landed on the NF cores, where real-time pollers
// that unis switches with RT throttling off starve any other thread for as long as they run, and a worker's
// on every other NF core. With this, they share the control core with the manager. Returns an error text.
// `pid`: another process's main thread instead of this one (a removed chain's worker that is leaving).
std::string confine_to_control_core(int control_core, pid_t pid = 0);

// Moves one thread (`task`: a thread id, or a process's main thread by its pid) to `core`. Returns an error text.
std::string pin_to_core(pid_t task, int core);

// DPDK object names (at most RTE_RING_NAMESIZE) of a ring and of the stats zone.
std::string ring_object_name(int ring_index);
// The name of the DPDK ring that carries `ring`: its own (RingConfig::object) or the one its index gives.
std::string ring_object(const RingConfig& ring);

}  // namespace tandem
