// One cgroup v1 `cpu` group per NF process under the run's directory, with cpu.shares written through
// open file descriptors (one pwrite per change, ~1.2 us here), and everything undone on release.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::nfvnice {

class CpuCgroups {
 public:
  // `run_dir`: a cgroup v1 cpu directory the control plane made for the run (and removes if we cannot);
  // `root`: the hierarchy's root, where processes go back on release.
  CpuCgroups(std::string run_dir, std::string root);
  ~CpuCgroups() { release_all(); }
  CpuCgroups(const CpuCgroups&) = delete;
  CpuCgroups& operator=(const CpuCgroups&) = delete;

  // Creates `run_dir/name`, moves the process (all its threads) into it; returns the group's index.
  // Throws std::runtime_error naming the group and the error.
  size_t add(const std::string& name, pid_t process);
  // Writes cpu.shares if it differs from what was last written; returns true if it wrote.
  bool set_shares(size_t group, uint64_t shares);
  uint64_t shares(size_t group) const { return groups_[group].shares; }
  uint64_t writes() const { return writes_; }
  std::string dir(size_t group) const { return groups_[group].dir; }
  // Moves every process back to the root and removes the groups; safe to call twice.
  void release_all();

 private:
  struct Group {
    std::string dir;
    pid_t process;
    int shares_fd;
    uint64_t shares;
  };
  std::string run_dir_, root_;
  std::vector<Group> groups_;
  uint64_t writes_ = 0;
};

}  // namespace tandem::nfvnice
