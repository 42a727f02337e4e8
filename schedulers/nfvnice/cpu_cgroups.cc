// Creating, weighting and removing the per-NF cpu groups, on cgroup v1 or v2, as work for the cgroup work queue.
#include "cpu_cgroups.h"

#include <cerrno>

#include "cpu_shares.h"

namespace tandem::nfvnice {

CpuCgroups::CpuCgroups(std::string run_dir, CgroupHierarchy hierarchy, CgroupWorkQueue& work)
    : run_dir_(std::move(run_dir)), hierarchy_(std::move(hierarchy)), work_(work) {
  if (run_dir_.empty())
    throw std::runtime_error("nfvnice needs a cgroup cpu directory for the run (paths.cpu_cgroup_dir)");
  if (hierarchy_.version == CgroupVersion::V1) return;
  // v2: the NFs' groups get cpu.weight only where their parent, the run's group, enables cpu for its children. The
  // run's group holds no process, so it may; the group goes with the run, and this setting with it.
  work_.post([control = run_dir_ + "/cgroup.subtree_control"](CgroupFiles& files) -> std::optional<std::string> {
    if (cgroup_list_has(files.read(control).value_or(""), "cpu")) return std::nullopt;
    if (int error = files.write(control, "+cpu"))
      return "cgroup " + cgroup_failure(control, "enabling cpu for the NFs' groups (+cpu)", error);
    return std::nullopt;
  });
}

size_t CpuCgroups::add(const std::string& name, pid_t process) {
  Group group{run_dir_ + "/" + name, process, std::make_shared<GroupFiles>(kDefaultShares), kDefaultShares};
  work_.post([dir = group.dir, process, root = hierarchy_.root, weight = std::string(weight_file()),
              group_files = group.files](CgroupFiles& files) -> std::optional<std::string> {
    auto fail = [&](const std::string& file, const std::string& what, int error) {
      if (process > 0) files.write(root + "/cgroup.procs", std::to_string(process));
      files.remove_group(dir);
      return "cgroup " + cgroup_failure(file, what, error);
    };
    if (int error = files.make_group(dir); error != 0 && error != EEXIST) return fail(dir, "mkdir", error);
    if (process <= 0) return std::nullopt;  // a worker that has exited (its chain removed): 0 would move this process
    // cgroup.procs moves every thread of the process (the NF's and EAL's), not just the main one, on v1 and v2 alike.
    if (int error = files.write(dir + "/cgroup.procs", std::to_string(process)))
      return fail(dir + "/cgroup.procs", "moving pid " + std::to_string(process) + " in", error);
    int fd = files.open_for_writes(dir + "/" + weight);
    if (fd < 0) return fail(dir + "/" + weight, "opening", -fd);
    group_files->weight_fd.store(fd, std::memory_order_release);  // a new group's weight is the default: 1024 or 100
    return std::nullopt;
  });
  groups_.push_back(std::move(group));
  return groups_.size() - 1;
}

bool CpuCgroups::set_shares(size_t group, uint64_t shares) {
  Group& g = groups_[group];
  if (g.process <= 0) return false;
  bool waiting = g.files->writes_waiting.load(std::memory_order_acquire) > 0;
  if (shares == (waiting ? g.asked : g.files->written.load(std::memory_order_relaxed))) return false;
  uint64_t value = hierarchy_.version == CgroupVersion::V1 ? shares : cpu_weight_of_shares(shares);
  g.asked = shares;
  writes_++;
  // NFVnice may reweight every NF each period: a queued write each would wake the queue's thread as often, on the
  // loop's core. A refused write means the process and its group are going away; the manager reports the exit.
  if (int fd = g.files->weight_fd.load(std::memory_order_acquire); fd >= 0 && !waiting) {
    if (work_.files().rewrite(fd, std::to_string(value)) == 0)
      g.files->written.store(shares, std::memory_order_relaxed);
    return true;
  }
  g.files->writes_waiting.fetch_add(1, std::memory_order_release);
  work_.post([group_files = g.files, shares, value](CgroupFiles& files) -> std::optional<std::string> {
    // No descriptor: the group could not be made (a failure already told).
    int fd = group_files->weight_fd.load(std::memory_order_relaxed);
    if (fd >= 0 && files.rewrite(fd, std::to_string(value)) == 0)
      group_files->written.store(shares, std::memory_order_relaxed);
    group_files->writes_waiting.fetch_sub(1, std::memory_order_release);
    return std::nullopt;
  });
  return true;
}

void CpuCgroups::release_all() {
  for (Group& g : groups_)
    work_.post([dir = g.dir, process = g.process, root = hierarchy_.root,
                group_files = g.files](CgroupFiles& files) -> std::optional<std::string> {
      if (int fd = group_files->weight_fd.exchange(-1); fd >= 0) files.close_file(fd);
      if (process > 0) files.write(root + "/cgroup.procs", std::to_string(process));
      files.remove_group(dir);  // fails only if a task is still inside; the control plane's journal removes it then
      return std::nullopt;
    });
  groups_.clear();
}

}  // namespace tandem::nfvnice
