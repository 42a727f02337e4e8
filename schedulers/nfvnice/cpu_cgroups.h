// One cgroup `cpu` group per NF process under the run's directory, on cgroup v1 (cpu.shares) or v2 (cpu.weight, from
// the shares by cpu_weight_of_shares), written through open file descriptors (one pwrite per change, ~1.2 us here),
// and everything undone on release.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "schedulers/mechanisms/cgroup_files.h"
#include "schedulers/mechanisms/cgroup_fs.h"

namespace tandem::nfvnice {

class CpuCgroups {
 public:
  // `run_dir`: a directory the control plane made for the run in `hierarchy` (and removes if we cannot); on v2 it
  // has the cpu controller (the control plane enabled it in the root's cgroup.subtree_control), and we enable it for
  // the NFs' groups in the run directory's own. Throws std::runtime_error naming the file and the kernel's answer.
  CpuCgroups(std::string run_dir, CgroupHierarchy hierarchy, CgroupFiles& files = kernel_cgroup_files());
  ~CpuCgroups() { release_all(); }
  CpuCgroups(const CpuCgroups&) = delete;
  CpuCgroups& operator=(const CpuCgroups&) = delete;

  // Creates `run_dir/name`, moves the process (all its threads) into it; returns the group's index.
  // Throws std::runtime_error naming the group and the error, having removed the group.
  size_t add(const std::string& name, pid_t process);
  // Writes the shares (v2: their cpu.weight) if they differ from what was last written; returns true if it wrote.
  bool set_shares(size_t group, uint64_t shares);
  uint64_t shares(size_t group) const { return groups_[group].shares; }
  uint64_t writes() const { return writes_; }
  std::string dir(size_t group) const { return groups_[group].dir; }
  const CgroupHierarchy& hierarchy() const { return hierarchy_; }
  // The file a group's weight is written to: cpu.shares (v1) or cpu.weight (v2).
  const char* weight_file() const { return hierarchy_.version == CgroupVersion::V1 ? "cpu.shares" : "cpu.weight"; }
  // Moves every process back to the root and removes the groups; safe to call twice.
  void release_all();

 private:
  struct Group {
    std::string dir;
    pid_t process;
    int weight_fd;
    uint64_t shares;
  };
  std::string run_dir_;
  CgroupHierarchy hierarchy_;
  CgroupFiles& files_;
  std::vector<Group> groups_;
  uint64_t writes_ = 0;
};

}  // namespace tandem::nfvnice
