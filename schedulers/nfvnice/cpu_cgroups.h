// One cgroup `cpu` group per NF process under the run's directory, on cgroup v1 (cpu.shares) or v2 (cpu.weight, from
// the shares by cpu_weight_of_shares), made, weighted and removed through the run's cgroup work queue in the order
// asked, so that no move of a process stops the control loop; everything undone on release.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "schedulers/mechanisms/cgroup_fs.h"
#include "schedulers/mechanisms/cgroup_work_queue.h"

namespace tandem::nfvnice {

class CpuCgroups {
 public:
  // `run_dir`: a directory the control plane made for the run in `hierarchy` (and removes if we cannot); on v2 it
  // has the cpu controller (the control plane enabled it in the root's cgroup.subtree_control), and we enable it for
  // the NFs' groups in the run directory's own. What fails reaches `work`'s failures, naming the file and the
  // kernel's answer; the manager waits for the work of a run's first module, so a run that cannot have its groups
  // fails at its start as before.
  CpuCgroups(std::string run_dir, CgroupHierarchy hierarchy, CgroupWorkQueue& work);
  ~CpuCgroups() { release_all(); }
  CpuCgroups(const CpuCgroups&) = delete;
  CpuCgroups& operator=(const CpuCgroups&) = delete;

  // Asks for `run_dir/name` and the process (all its threads) moved into it; returns the group's index. A group that
  // cannot be made or filled is removed again.
  size_t add(const std::string& name, pid_t process);
  // Asks for the shares (v2: their cpu.weight) if the group does not have them or is not about to; returns true if
  // it asked. Once the group is made and no earlier write waits, written at once through its open weight file (one
  // pwrite, ~1 us, which takes no cgroup lock); before, after the queue's work for the group.
  bool set_shares(size_t group, uint64_t shares);
  // What the group's weight file holds: the last shares written (a write the kernel refused leaves it unchanged).
  uint64_t shares(size_t group) const { return groups_[group].files->written.load(std::memory_order_relaxed); }
  uint64_t writes() const { return writes_; }
  std::string dir(size_t group) const { return groups_[group].dir; }
  const CgroupHierarchy& hierarchy() const { return hierarchy_; }
  // The file a group's weight is written to: cpu.shares (v1) or cpu.weight (v2).
  const char* weight_file() const { return hierarchy_.version == CgroupVersion::V1 ? "cpu.shares" : "cpu.weight"; }
  // Asks for every process moved back to the root and the groups removed; safe to call twice.
  void release_all();

 private:
  // A group's open weight file (opened by the work queue's thread; -1 until then) and what was written there.
  struct GroupFiles {
    std::atomic<int> weight_fd{-1};
    std::atomic<uint64_t> written;
    std::atomic<uint32_t> writes_waiting{0};
    explicit GroupFiles(uint64_t shares) : written(shares) {}
  };
  struct Group {
    std::string dir;
    pid_t process;
    std::shared_ptr<GroupFiles> files;
    uint64_t asked;  // the last shares asked for: what the group has once the queue caught up
  };
  std::string run_dir_;
  CgroupHierarchy hierarchy_;
  CgroupWorkQueue& work_;
  std::vector<Group> groups_;
  uint64_t writes_ = 0;
};

}  // namespace tandem::nfvnice
