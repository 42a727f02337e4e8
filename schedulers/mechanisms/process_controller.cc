// Process-controller backends: SCHED_FIFO priority switching (the paper's choice), SIGSTOP/SIGCONT, cgroup v2 freezer.
#include "process_controller.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>

#include "bystander_threads.h"
#include "cgroup_files.h"
#include "cgroup_fs.h"
#include "cgroup_work_queue.h"

namespace tandem {
namespace {

std::runtime_error system_error(const std::string& what, pid_t task) {
  return std::runtime_error(what + " for task " + std::to_string(task) + " failed: " + strerror(errno));
}

// A task that has exited cannot be switched; the manager reaps it and names the NF, so that is not our error.
bool gone() { return errno == ESRCH; }

// A worker that has exited is pid 0 in the view (a removed chain's): to the system calls, 0 is the caller itself,
// and to kill(2) its whole process group, so every backend passes it by.
bool absent(pid_t task) { return task <= 0; }

// Every task of a core is SCHED_FIFO; the one that runs is the one with the highest priority, and the kernel's RT
// scheduler hands the core over as soon as the priorities change. FIFO tasks are never time-sliced by the kernel,
// so only UNiS decides (the paper used RR with the same effect: its slices are far shorter than RR's).
// A hand-over is one system call: the new task is raised above every priority given so far, and the old one is
// left where it is, already below. Lowering it too would cost a second call and, while it still runs, a second
// reschedule interrupt to its core; on a KVM guest each of those is a VM exit, and the two together kept the
// manager's loop away from the generator, sink and monitor for ~8 us a switch. Once the climbing priority reaches
// the top of the range, every task is brought back down (parked ones first, so none ever overtakes a running one).
class FifoPriorityController final : public ProcessController {
 public:
  std::string name() const override { return "fifo"; }
  void adopt(pid_t task) override {
    if (absent(task)) return;
    sched_param param{.sched_priority = kParked};
    if (sched_setscheduler(task, SCHED_FIFO, &param) != 0 && !gone())
      throw system_error("sched_setscheduler(SCHED_FIFO)", task);
    tasks_.push_back(task);
  }
  void activate(pid_t task) override {
    if (absent(task)) return;
    if (top_ == kHighest) renormalise();
    set_priority(task, ++top_);
    running_.insert(task);
  }
  void deactivate(pid_t task) override {
    if (absent(task)) return;
    set_priority(task, kParked);
    running_.erase(task);
  }
  void hand_over(pid_t from, pid_t to) override {
    if (to > 0) activate(to);
    running_.erase(from);  // stays at its priority, below `to`'s, until the next renormalisation
  }
  void release_all() override {
    sched_param param{.sched_priority = 0};
    for (pid_t task : tasks_) sched_setscheduler(task, SCHED_OTHER, &param);
    tasks_.clear();
    running_.clear();
    top_ = kFirstRunning - 1;
  }

 private:
  // Below the kernel's own real-time threads (migration, watchdogs at 99); the range only sets how often
  // renormalise() runs.
  static constexpr int kParked = 1, kFirstRunning = 2, kHighest = 90;
  static void set_priority(pid_t task, int priority) {
    sched_param param{.sched_priority = priority};
    if (sched_setparam(task, &param) != 0 && !gone()) throw system_error("sched_setparam", task);
  }
  void renormalise() {
    for (pid_t task : tasks_)
      if (!running_.count(task)) set_priority(task, kParked);
    for (pid_t task : running_) set_priority(task, kFirstRunning);
    top_ = kFirstRunning;
  }
  std::vector<pid_t> tasks_;
  std::set<pid_t> running_;  // at most one per core: the last one activated there
  int top_ = kFirstRunning - 1;
};

// SIGSTOP parks the whole process (stop signals act on every thread of a process), SIGCONT resumes it. The other
// threads of the process are kept on the task's core (bystander_threads.h).
class SignalController final : public ProcessController {
 public:
  std::string name() const override { return "signal"; }
  void adopt(pid_t task) override {
    if (absent(task)) return;
    bystanders_.gather(task);
    send(task, SIGSTOP);
    tasks_.push_back(task);
  }
  void activate(pid_t task) override { send(task, SIGCONT); }
  void deactivate(pid_t task) override { send(task, SIGSTOP); }
  void release_all() override {
    for (pid_t task : tasks_) kill(task, SIGCONT);
    tasks_.clear();
    bystanders_.release();
  }

 private:
  static void send(pid_t task, int sig) {
    if (absent(task)) return;
    if (kill(task, sig) != 0 && !gone()) throw system_error(sig == SIGSTOP ? "SIGSTOP" : "SIGCONT", task);
  }
  std::vector<pid_t> tasks_;
  BystanderThreads bystanders_;
};

// Each adopted process gets its own child cgroup; cgroup.freeze is kept open so that a switch is one write.
// cgroup.freeze is a core file of cgroup v2 (Linux 5.2), in every non-root group, with no controller to enable.
// Freezing acts on every thread of the group, so the other threads of the process are kept on the task's core too.
// With a work queue (a run's), the groups are made, filled and removed on its thread: moving a process between
// groups after a quiet spell waits for an RCU grace period (6-18 ms a switch to unis here, the loop held
// meanwhile). Until its group is made, an adopted task runs on under the kernel's scheduler, as it did before the
// module took it; settle() then gives it the state the module asked last.
class FreezerController final : public ProcessController {
 public:
  FreezerController(std::string parent, std::string root, CgroupFiles& files, CgroupWorkQueue* work)
      : parent_(std::move(parent)), root_(std::move(root)), files_(work ? work->files() : files), work_(work) {
    if (parent_.empty()) throw std::runtime_error("the freezer backend needs a cgroup v2 directory for the run");
  }
  ~FreezerController() override { release_all(); }
  std::string name() const override { return "freezer"; }
  void adopt(pid_t task) override {
    if (absent(task)) return;
    pid_t process = process_of(task);
    std::string dir = parent_ + "/task-" + std::to_string(task);
    Group& group = groups_[task] = Group{.process = process, .dir = dir};
    bystanders_.gather(task);
    if (!work_) {
      if (std::optional<std::string> error = make(files_, root_, task, process, dir, *group.made))
        throw std::runtime_error(*error);
      group.freeze_fd = group.made->load();
      freeze(task, true);
      return;
    }
    pending_++;
    work_->post([root = root_, task, process, dir, made = group.made](CgroupFiles& files) {
      return make(files, root, task, process, dir, *made);
    });
  }
  void activate(pid_t task) override {
    if (!absent(task)) freeze(task, false);
  }
  void deactivate(pid_t task) override {
    if (!absent(task)) freeze(task, true);
  }
  void settle() override {
    if (pending_ == 0) return;
    for (auto& [task, group] : groups_) {
      if (group.freeze_fd != kPending || group.failed) continue;
      int fd = group.made->load(std::memory_order_acquire);
      if (fd == kPending) continue;
      pending_--;
      if (fd == kFailed) {
        group.failed = true;  // the queue keeps why, and the run warns: the task runs on, not parked
        continue;
      }
      group.freeze_fd = fd;
      write_state(task, group);
    }
  }
  void release_all() override {
    // With a queue: every task thawed at once (fails only if the group is gone with its process), and only then its
    // group's removal posted: a thaw takes the cgroup mutex, which the queue's move out of a group holds while it
    // waits for the RCU grace period (a thaw behind it took 5 ms).
    if (work_)
      for (auto& [task, group] : groups_)
        if (group.freeze_fd >= 0) files_.rewrite(group.freeze_fd, "0");
    for (auto& [task, group] : groups_) {
      if (!work_) {
        release(files_, root_, group.process, group.dir, *group.made);
        continue;
      }
      work_->post([root = root_, process = group.process, dir = group.dir, made = group.made](CgroupFiles& files) {
        release(files, root, process, dir, *made);
        return std::optional<std::string>();
      });
    }
    groups_.clear();
    pending_ = 0;
    bystanders_.release();
  }

 private:
  static constexpr int kPending = -1, kFailed = -2;
  struct Group {
    pid_t process;
    std::string dir;
    // The open cgroup.freeze once the group is made (written by the queue's thread), or kPending, kFailed.
    std::shared_ptr<std::atomic<int>> made = std::make_shared<std::atomic<int>>(kPending);
    int freeze_fd = kPending;  // the loop's copy of `made`, once it has seen it
    bool failed = false;
    bool frozen = true;  // what the module asked last
  };
  // Makes the task's group and moves its process in; stores the open cgroup.freeze in `made` (kFailed on failure,
  // with the process back in the root group and the group removed). Returns what failed.
  static std::optional<std::string> make(CgroupFiles& files, const std::string& root, pid_t task, pid_t process,
                                         const std::string& dir, std::atomic<int>& made) {
    auto fail = [&](const std::string& file, const std::string& what, int error) {
      files.write(root + "/cgroup.procs", std::to_string(process));
      files.remove_group(dir);
      made.store(kFailed, std::memory_order_release);
      return "freezer, task " + std::to_string(task) + ": " + cgroup_failure(file, what, error);
    };
    if (int error = files.make_group(dir); error != 0 && error != EEXIST) return fail(dir, "mkdir", error);
    if (int error = files.write(dir + "/cgroup.procs", std::to_string(process)))
      return fail(dir + "/cgroup.procs", "moving pid " + std::to_string(process) + " in", error);
    int fd = files.open_for_writes(dir + "/cgroup.freeze");
    if (fd < 0) return fail(dir + "/cgroup.freeze", "opening", -fd);
    made.store(fd, std::memory_order_release);
    return std::nullopt;
  }
  // Lets the process run, back in the root group, and removes its group (after make, in the queue's order).
  static void release(CgroupFiles& files, const std::string& root, pid_t process, const std::string& dir,
                      const std::atomic<int>& made) {
    int fd = made.load(std::memory_order_acquire);
    if (fd >= 0) {
      files.rewrite(fd, "0");
      files.close_file(fd);
    }
    if (fd != kFailed) {
      files.write(root + "/cgroup.procs", std::to_string(process));
      files.remove_group(dir);
    }
  }
  void freeze(pid_t task, bool frozen) {
    auto it = groups_.find(task);
    if (it == groups_.end()) throw std::runtime_error("task " + std::to_string(task) + " was not adopted");
    it->second.frozen = frozen;
    if (it->second.freeze_fd >= 0) write_state(task, it->second);  // else: once its group is made (settle)
  }
  void write_state(pid_t task, const Group& group) {
    if (int error = files_.rewrite(group.freeze_fd, group.frozen ? "1" : "0"); error != 0 && error != ESRCH)
      throw std::runtime_error(
          "freezer, task " + std::to_string(task) + ": " +
          cgroup_failure(group.dir + "/cgroup.freeze", group.frozen ? "writing 1" : "writing 0", error));
  }
  std::string parent_, root_;
  CgroupFiles& files_;
  CgroupWorkQueue* work_;
  std::map<pid_t, Group> groups_;
  size_t pending_ = 0;  // groups asked of the queue whose outcome settle() has not seen yet
  BystanderThreads bystanders_;
};

}  // namespace

std::unique_ptr<ProcessController> make_process_controller(const std::string& backend, const std::string& cgroup_dir,
                                                           CgroupWorkQueue* work) {
  if (backend == "fifo") return std::make_unique<FifoPriorityController>();
  if (backend == "signal") return std::make_unique<SignalController>();
  if (backend == "freezer")
    return make_freezer_controller(cgroup_dir, cgroup_v2_mount().value_or("/sys/fs/cgroup"), kernel_cgroup_files(),
                                   work);
  throw std::runtime_error("unknown process-controller backend " + backend);
}

std::unique_ptr<ProcessController> make_freezer_controller(const std::string& cgroup_dir, const std::string& root,
                                                           CgroupFiles& files, CgroupWorkQueue* work) {
  return std::make_unique<FreezerController>(cgroup_dir, root, files, work);
}

std::optional<std::string> backend_unavailable(const std::string& backend) {
  if (backend != "freezer") return std::nullopt;  // scheduling policies and signals exist on every Linux
  std::optional<std::string> mount = cgroup_v2_mount();
  if (!mount)
    return "the freezer backend needs cgroup v2, which is not mounted on this machine (no cgroup2 in "
           "/proc/self/mounts)";
  // The root group has no cgroup.freeze; a child shows whether this kernel has the v2 freezer (Linux >= 5.2).
  std::string probe = *mount + "/tandem-probe-" + std::to_string(getpid());
  if (mkdir(probe.c_str(), 0755) != 0)
    return "the freezer backend needs to create cgroups under " + *mount + ": " + strerror(errno) + " (run as root)";
  bool has_freezer = access((probe + "/cgroup.freeze").c_str(), W_OK) == 0;
  rmdir(probe.c_str());
  if (!has_freezer) return "this kernel's cgroup v2 has no freezer (cgroup.freeze needs Linux 5.2 or later)";
  return std::nullopt;
}

}  // namespace tandem
