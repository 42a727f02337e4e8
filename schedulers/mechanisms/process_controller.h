// Process controllers: start and stop unmodified NF processes from outside, with interchangeable backends (UNiS).
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cgroup_files.h"
#include "cgroup_work_queue.h"

namespace tandem {

// A backend parks the tasks it adopts and lets exactly the activated ones run. Tasks are pids or thread ids
// (an external DPDK application is scheduled through its rte-worker thread).
class ProcessController {
 public:
  virtual ~ProcessController() = default;
  virtual std::string name() const = 0;
  // Takes charge of a task and parks it: it does not run until activated. Throws std::runtime_error.
  virtual void adopt(pid_t task) = 0;
  virtual void activate(pid_t task) = 0;
  virtual void deactivate(pid_t task) = 0;
  // Gives the core from one task to another. The new task is let run first: the old one stops only once its
  // successor is on its way, so the core is not left idle for the length of a system call. `from` or `to`
  // may be 0 (an NF that exited): that side is skipped.
  // A backend may do it with fewer calls (see the fifo backend).
  virtual void hand_over(pid_t from, pid_t to) {
    if (to > 0) activate(to);
    if (from > 0) deactivate(from);
  }
  // Puts every adopted task back as it was found (SCHED_OTHER, running, in its own cgroup). Never throws;
  // called on every exit path, so a parked real-time or stopped NF is never left behind.
  virtual void release_all() = 0;
  // Takes up what a backend left to a work queue (the freezer's groups, once made): called every tick.
  virtual void settle() {}
};

inline const std::vector<std::string> kProcessControllerBackends = {"fifo", "signal", "freezer"};

// `cgroup_dir` is a cgroup v2 directory the run owns (the control plane creates and journals it); only the
// freezer backend uses it, and `work`: where given, its groups are made and removed on that queue's thread, not in
// the caller's (adopt returns at once; the task is parked once settle() sees its group made).
std::unique_ptr<ProcessController> make_process_controller(const std::string& backend, const std::string& cgroup_dir,
                                                           CgroupWorkQueue* work = nullptr);

// The freezer backend on `cgroup_dir` in the cgroup v2 tree mounted at `root`, its system calls made through `files`
// (tests give it a fake cgroup2 tree; with `work`, through the queue's files).
std::unique_ptr<ProcessController> make_freezer_controller(const std::string& cgroup_dir, const std::string& root,
                                                           CgroupFiles& files = kernel_cgroup_files(),
                                                           CgroupWorkQueue* work = nullptr);

// Why `backend` cannot work on this machine, or nothing if it can.
std::optional<std::string> backend_unavailable(const std::string& backend);

}  // namespace tandem
