// Finding cgroup mounts in /proc/self/mounts, the hierarchy a controller is used through, and writing control files.
#include "cgroup_fs.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace tandem {
namespace {

// The first mount in `mounts` whose type and options satisfy `match`.
template <typename Match>
std::optional<std::string> find_mount(const std::string& mounts, Match match) {
  std::ifstream file(mounts);
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream fields(line);
    std::string device, target, type, options;
    fields >> device >> target >> type >> options;
    if (match(type, "," + options + ",")) return target;
  }
  return std::nullopt;
}

std::string read_all(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

std::optional<std::string> cgroup_v2_mount(const std::string& mounts) {
  return find_mount(mounts, [](const std::string& type, const std::string&) { return type == "cgroup2"; });
}

std::optional<std::string> cgroup_v1_mount(const std::string& controller, const std::string& mounts) {
  return find_mount(mounts, [&](const std::string& type, const std::string& options) {
    return type == "cgroup" && options.find("," + controller + ",") != std::string::npos;
  });
}

bool cgroup_list_has(const std::string& list, const std::string& name) {
  std::istringstream words(list);
  std::string word;
  while (words >> word)
    if (word == name) return true;
  return false;
}

std::optional<CgroupHierarchy> cgroup_hierarchy(const std::string& controller, const std::string& mounts) {
  if (std::optional<std::string> v1 = cgroup_v1_mount(controller, mounts))
    return CgroupHierarchy{CgroupVersion::V1, *v1};
  std::optional<std::string> v2 = cgroup_v2_mount(mounts);
  if (v2 && cgroup_list_has(read_all(*v2 + "/cgroup.controllers"), controller))
    return CgroupHierarchy{CgroupVersion::V2, *v2};
  return std::nullopt;
}

std::string cgroup_hierarchy_missing(const std::string& controller, const std::string& mounts) {
  std::string v1 = "no cgroup v1 hierarchy binds it (no 'cgroup ... " + controller + "' line in " + mounts + ")";
  std::optional<std::string> v2 = cgroup_v2_mount(mounts);
  if (!v2)
    return "the '" + controller + "' controller is in no cgroup hierarchy: " + v1 + ", and cgroup v2 is not mounted";
  std::string offered = read_all(*v2 + "/cgroup.controllers");
  while (!offered.empty() && (offered.back() == '\n' || offered.back() == ' ')) offered.pop_back();
  return "the '" + controller + "' controller is in no cgroup hierarchy: " + v1 + ", and cgroup v2 at " + *v2 +
         " offers only '" + offered + "' (its cgroup.controllers)";
}

bool write_file(const std::string& path, const std::string& value) {
  int fd = open(path.c_str(), O_WRONLY);
  if (fd < 0) return false;
  bool ok = write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
  close(fd);
  return ok;
}

}  // namespace tandem
