// The kernel's cgroup files through plain system calls, and what the kernel's errors on them mean.
#include "cgroup_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tandem {
namespace {

class KernelCgroupFiles final : public CgroupFiles {
 public:
  int make_group(const std::string& dir) override { return mkdir(dir.c_str(), 0755) == 0 ? 0 : errno; }
  int remove_group(const std::string& dir) override { return rmdir(dir.c_str()) == 0 ? 0 : errno; }
  int write(const std::string& file, const std::string& value) override {
    int fd = open(file.c_str(), O_WRONLY);
    if (fd < 0) return errno;
    int error = rewrite(fd, value);
    close(fd);
    return error;
  }
  std::optional<std::string> read(const std::string& file) override {
    std::ifstream in(file);
    if (!in) return std::nullopt;
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  int open_for_writes(const std::string& file) override {
    int fd = open(file.c_str(), O_WRONLY);
    return fd >= 0 ? fd : -errno;
  }
  int rewrite(int fd, const std::string& value) override {
    ssize_t written = pwrite(fd, value.data(), value.size(), 0);
    if (written == static_cast<ssize_t>(value.size())) return 0;
    return written < 0 ? errno : EIO;
  }
  void close_file(int fd) override { close(fd); }
};

// What the kernel means by `error` on the cgroup file named `name` (a base name), or "".
std::string meaning(const std::string& name, int error) {
  if (name == "cgroup.procs" && error == EBUSY)
    return "cgroup v2 keeps processes out of a group that enables controllers for its children (its "
           "cgroup.subtree_control is not empty)";
  if (name == "cgroup.procs" && error == EOPNOTSUPP)
    return "the group is no valid domain (cgroup.type 'domain invalid': a sibling is threaded), so it holds no process";
  if ((name == "cgroup.procs" || name == "cgroup.threads") && error == ESRCH) return "the process has exited";
  if (name == "cgroup.subtree_control" && error == ENOENT)
    return "the controller is not in the group's cgroup.controllers: its parent does not enable it";
  if (name == "cgroup.subtree_control" && error == EBUSY)
    return "the group holds processes (only the root may, beside controllers for its children), or a child still "
           "uses the controller";
  if (name == "cgroup.subtree_control" && error == EINVAL)
    return "an unknown controller, or (cpu) a real-time task outside the root group while the kernel groups "
           "real-time tasks (CONFIG_RT_GROUP_SCHED)";
  if (name == "cpu.weight" && (error == ERANGE || error == EINVAL)) return "cpu.weight takes 1 to 10000";
  if (error == ENOENT) return "no such file: the group's controller is not enabled, or the group is gone";
  return "";
}

}  // namespace

CgroupFiles& kernel_cgroup_files() {
  static KernelCgroupFiles files;
  return files;
}

std::string cgroup_failure(const std::string& file, const std::string& what, int error) {
  std::string name = file.substr(file.find_last_of('/') + 1);
  std::string why = meaning(name, error);
  return file + ": " + what + ": " + strerror(error) + (why.empty() ? "" : " (" + why + ")");
}

}  // namespace tandem
