// Starting a program the manager supervises (a worker, an external NF's application) without copying the manager's
// address space: the child shares it until its exec, as posix_spawn's does.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace tandem {

// What the child is given before it executes the program; every child of the manager also dies with it (SIGKILL:
// a busy poller must never outlive it), ignores SIGINT (the manager decides when its children stop) and runs
// without address-space randomisation (a DPDK secondary maps the primary's memory at the same addresses).
struct ChildSetup {
  // Descriptors the child's standard input, output and error become (-1: the manager's own).
  int stdin_from = -1, stdout_to = -1, stderr_to = -1;
  bool idle_policy = false;  // SCHED_IDLE (its threads inherit it): see launch_worker
};

// Starts `binary` with `args` (argv[0] first); returns its pid. A program that cannot be executed is told on
// stderr and its child exits with status 127, as a shell's does, for the supervision to report by name.
// fork() stopped the manager's loop, which carries the traffic, 1-5 ms a process on this project's machines: it
// copies the page tables of an address space that maps the hugepages, and each page the loop then writes is copied
// again. Here the calling thread waits only until the child's exec (clone with CLONE_VM | CLONE_VFORK).
pid_t spawn_supervised(const std::string& binary, const std::vector<std::string>& args, const ChildSetup& setup);

}  // namespace tandem
