// The other threads of a process that a backend stops and resumes, kept on the core of the task it schedules.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <vector>

namespace tandem {

// SIGSTOP/SIGCONT and the cgroup freezer act on every thread of a process: each stop and each resume wakes the
// threads that sleep beside the scheduled one (DPDK's interrupt and IPC threads, testpmd's main lcore) so that they
// stop or go on. Those threads sleep on the control core; at tens of thousands of switches a second their wake-ups
// kept every other task of the control core (a shell, the user's Ctrl-C, a test's clock) off the CPU for up to 20 s
// on our 2-vCPU machines. Moved to the core of the task the backend schedules, they wake where the NF runs, and what
// the switching costs shows up in the NF core's throughput, where it belongs.
class BystanderThreads {
 public:
  // Moves every thread of `task`'s process but `task` itself to the CPUs `task` may run on, remembering where each
  // was. A thread that exits meanwhile is passed by. Returns how many it moved.
  int gather(pid_t task);
  // Gives each moved thread that is still there (in the same process) its CPUs back. Never throws.
  void release() noexcept;

 private:
  struct Moved {
    pid_t thread, process;
    cpu_set_t was;
  };
  std::vector<Moved> moved_;
};

// The process (thread group) a task belongs to; the task itself where /proc no longer knows it.
pid_t process_of(pid_t task);

}  // namespace tandem
