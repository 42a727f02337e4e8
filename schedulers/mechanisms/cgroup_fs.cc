// Finding cgroup mounts in /proc/self/mounts and writing control files.
#include "cgroup_fs.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace tandem {
namespace {

// The first mount whose type and options satisfy `match`.
template <typename Match>
std::optional<std::string> find_mount(Match match) {
  std::ifstream mounts("/proc/self/mounts");
  std::string line;
  while (std::getline(mounts, line)) {
    std::istringstream fields(line);
    std::string device, target, type, options;
    fields >> device >> target >> type >> options;
    if (match(type, "," + options + ",")) return target;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> cgroup_v2_mount() {
  return find_mount([](const std::string& type, const std::string&) { return type == "cgroup2"; });
}

std::optional<std::string> cgroup_v1_mount(const std::string& controller) {
  return find_mount([&](const std::string& type, const std::string& options) {
    return type == "cgroup" && options.find("," + controller + ",") != std::string::npos;
  });
}

bool write_file(const std::string& path, const std::string& value) {
  int fd = open(path.c_str(), O_WRONLY);
  if (fd < 0) return false;
  bool ok = write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
  close(fd);
  return ok;
}

}  // namespace tandem
