// Creating, weighting and removing the per-NF cpu groups, on cgroup v1 or v2.
#include "cpu_cgroups.h"

#include <stdexcept>

#include "cpu_shares.h"

namespace tandem::nfvnice {

CpuCgroups::CpuCgroups(std::string run_dir, CgroupHierarchy hierarchy, CgroupFiles& files)
    : run_dir_(std::move(run_dir)), hierarchy_(std::move(hierarchy)), files_(files) {
  if (run_dir_.empty())
    throw std::runtime_error("nfvnice needs a cgroup cpu directory for the run (paths.cpu_cgroup_dir)");
  if (hierarchy_.version == CgroupVersion::V1) return;
  // v2: the NFs' groups get cpu.weight only where their parent, the run's group, enables cpu for its children. The
  // run's group holds no process, so it may; the group goes with the run, and this setting with it.
  std::string control = run_dir_ + "/cgroup.subtree_control";
  if (cgroup_list_has(files_.read(control).value_or(""), "cpu")) return;
  if (int error = files_.write(control, "+cpu"))
    throw std::runtime_error("cgroup " + cgroup_failure(control, "enabling cpu for the NFs' groups (+cpu)", error));
}

size_t CpuCgroups::add(const std::string& name, pid_t process) {
  std::string dir = run_dir_ + "/" + name;
  auto fail = [&](const std::string& file, const std::string& what, int error) {
    files_.write(hierarchy_.root + "/cgroup.procs", std::to_string(process));
    files_.remove_group(dir);
    return std::runtime_error("cgroup " + cgroup_failure(file, what, error));
  };
  if (int error = files_.make_group(dir); error != 0 && error != EEXIST) throw fail(dir, "mkdir", error);
  if (process <= 0) {  // a worker that has exited (its chain removed): writing 0 would move this process itself
    groups_.push_back({dir, process, -1, kDefaultShares});
    return groups_.size() - 1;
  }
  // cgroup.procs moves every thread of the process (the NF's and EAL's), not just the main one, on v1 and v2 alike.
  if (int error = files_.write(dir + "/cgroup.procs", std::to_string(process)))
    throw fail(dir + "/cgroup.procs", "moving pid " + std::to_string(process) + " in", error);
  std::string weight = dir + "/" + weight_file();
  int fd = files_.open_for_writes(weight);
  if (fd < 0) throw fail(weight, "opening", -fd);
  groups_.push_back({dir, process, fd, kDefaultShares});  // a new group's weight is the default: 1024 or 100
  return groups_.size() - 1;
}

bool CpuCgroups::set_shares(size_t group, uint64_t shares) {
  Group& g = groups_[group];
  if (g.shares == shares || g.process <= 0) return false;
  uint64_t value = hierarchy_.version == CgroupVersion::V1 ? shares : cpu_weight_of_shares(shares);
  // A failure means the process and its group are going away; the manager reports the exit.
  if (files_.rewrite(g.weight_fd, std::to_string(value)) == 0) g.shares = shares;
  writes_++;
  return true;
}

void CpuCgroups::release_all() {
  for (Group& g : groups_) {
    if (g.process <= 0) {  // one with no process (add): nothing to move back
      files_.remove_group(g.dir);
      continue;
    }
    files_.close_file(g.weight_fd);
    files_.write(hierarchy_.root + "/cgroup.procs", std::to_string(g.process));
    files_.remove_group(g.dir);  // fails only if a task is still inside; the control plane's journal removes it then
  }
  groups_.clear();
}

}  // namespace tandem::nfvnice
