// Creating, weighting and removing the per-NF cgroup v1 cpu groups.
#include "cpu_cgroups.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "cpu_shares.h"
#include "schedulers/mechanisms/cgroup_fs.h"

namespace tandem::nfvnice {

CpuCgroups::CpuCgroups(std::string run_dir, std::string root) : run_dir_(std::move(run_dir)), root_(std::move(root)) {
  if (run_dir_.empty())
    throw std::runtime_error("nfvnice needs a cgroup v1 cpu directory for the run (paths.cpu_cgroup_dir)");
}

size_t CpuCgroups::add(const std::string& name, pid_t process) {
  std::string dir = run_dir_ + "/" + name;
  auto fail = [&](const std::string& what) {
    int error = errno;
    write_file(root_ + "/cgroup.procs", std::to_string(process));
    rmdir(dir.c_str());
    return std::runtime_error("cgroup " + dir + ": " + what + ": " + strerror(error));
  };
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) throw fail("mkdir");
  // v1's cgroup.procs moves every thread of the process (the NF's and EAL's), not just the main one.
  if (!write_file(dir + "/cgroup.procs", std::to_string(process)))
    throw fail("moving pid " + std::to_string(process) + " in");
  int fd = open((dir + "/cpu.shares").c_str(), O_WRONLY);
  if (fd < 0) throw fail("opening cpu.shares");
  groups_.push_back({dir, process, fd, kDefaultShares});
  return groups_.size() - 1;
}

bool CpuCgroups::set_shares(size_t group, uint64_t shares) {
  Group& g = groups_[group];
  if (g.shares == shares) return false;
  std::string text = std::to_string(shares);
  // A failure means the process and its group are going away; the manager reports the exit.
  if (pwrite(g.shares_fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size())) g.shares = shares;
  writes_++;
  return true;
}

void CpuCgroups::release_all() {
  for (Group& g : groups_) {
    close(g.shares_fd);
    write_file(root_ + "/cgroup.procs", std::to_string(g.process));
    rmdir(g.dir.c_str());  // fails only if a task is still inside; the control plane's journal removes it then
  }
  groups_.clear();
}

}  // namespace tandem::nfvnice
