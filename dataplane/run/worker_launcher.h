// Starting worker processes (fork + exec, tied to the manager's life) and reaping them.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "contract/deployment.h"

namespace tandem {

// Starts the worker for `plan`; it receives SIGKILL if the manager dies. Returns its pid. With a `staging_slot`, it
// attaches in that slot of the stats zone and waits there to be told to go on (contract/start_gate.h).
pid_t launch_worker(const Deployment& deployment, const WorkerPlan& plan, const std::string& deployment_path,
                    int staging_slot = -1);

// How a reaped worker ended, e.g. "exited with status 3" or "killed by signal 9 (SIGKILL)".
std::string describe_exit(int wait_status);

// Returns the wait status of `pid` if it has exited, without blocking.
std::optional<int> reap_if_exited(pid_t pid);

// Whether `pid` has exited and waits to be reaped; it is left unreaped (waitid's WNOWAIT).
bool has_exited(pid_t pid);

}  // namespace tandem
