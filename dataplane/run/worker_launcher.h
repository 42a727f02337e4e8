// Starting worker processes (fork + exec, tied to the manager's life) and reaping them.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "contract/deployment.h"

namespace tandem {

// How a worker starts: at the run's start (its processes one by one before the traffic), or beside the traffic (an
// added chain's; a re-layout's, in a spare slot of the stats zone where it waits to be told to go on:
// contract/start_gate.h).
struct WorkerStart {
  bool beside_traffic = false;
  int staging_slot = -1;
};

// Starts the worker for `plan`; it receives SIGKILL if the manager dies. Returns its pid. One started beside the
// traffic runs under SCHED_IDLE, on the control core in the naps the manager's loop takes for it
// (run_control_loop.cc), until give_normal_policy (beside_traffic_start.h).
// `serial`: the process's own number in the run, after which its NF instances are named (nf_instance_name).
pid_t launch_worker(const Deployment& deployment, const WorkerPlan& plan, const std::string& deployment_path,
                    uint64_t serial, WorkerStart start = {});

// Every thread of `pid` under the normal policy again (the scheduler module sets its own once attached).
void give_normal_policy(pid_t pid);

// How a reaped worker ended, e.g. "exited with status 3" or "killed by signal 9 (SIGKILL)".
std::string describe_exit(int wait_status);

// Returns the wait status of `pid` if it has exited, without blocking.
std::optional<int> reap_if_exited(pid_t pid);

// Whether `pid` has exited and waits to be reaped; it is left unreaped (waitid's WNOWAIT).
bool has_exited(pid_t pid);

}  // namespace tandem
