// DPDK's clean-up at the manager's exit, bounded in time: a process killed inside DPDK may hold its shared memory
// lock for good, and the clean-up would wait on it for ever.
#pragma once

namespace tandem {

// Runs rte_eal_cleanup(); should it not return within `seconds`, says so on stderr and ends the process with
// `exit_code` (what the run decided: its results are written before). The control plane removes the run's hugepage
// files and DPDK runtime directory either way.
void bounded_eal_cleanup(double seconds, int exit_code);

}  // namespace tandem
