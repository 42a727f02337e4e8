// The cgroup hierarchies (v1 and v2) of this machine: where they are mounted, and which one a controller is used
// through.
#pragma once

#include <optional>
#include <string>

namespace tandem {

inline constexpr const char* kMountsFile = "/proc/self/mounts";

// Where cgroup v2 is mounted (e.g. /sys/fs/cgroup or /sys/fs/cgroup/unified), or nothing.
std::optional<std::string> cgroup_v2_mount(const std::string& mounts = kMountsFile);

// Where the cgroup v1 hierarchy holding `controller` (e.g. "cpu") is mounted, or nothing.
std::optional<std::string> cgroup_v1_mount(const std::string& controller, const std::string& mounts = kMountsFile);

enum class CgroupVersion { V1, V2 };

struct CgroupHierarchy {
  CgroupVersion version;
  std::string root;  // where it is mounted: the root group, where processes go back
  const char* name() const { return version == CgroupVersion::V1 ? "v1" : "v2"; }
};

// The hierarchy a run uses `controller` (cpu, cpuset) through: the cgroup v1 hierarchy that binds it where the host
// has one (a controller is bound to one hierarchy at a time, so cgroup v2 cannot offer it then); else cgroup v2,
// where its root's cgroup.controllers lists it (the control plane enables it in the root's cgroup.subtree_control
// for the run, and takes it back after); else nothing. The same rule as controlplane/machine/mounts.py.
std::optional<CgroupHierarchy> cgroup_hierarchy(const std::string& controller, const std::string& mounts = kMountsFile);

// Why neither hierarchy offers `controller`: what each one lacks, for an error message.
std::string cgroup_hierarchy_missing(const std::string& controller, const std::string& mounts = kMountsFile);

// Whether a cgroup v2 list (cgroup.controllers, cgroup.subtree_control: names separated by spaces) holds `name`.
bool cgroup_list_has(const std::string& list, const std::string& name);

// Writes `value` to a cgroup (or any sysfs/procfs) file in one write(2); false if that failed.
bool write_file(const std::string& path, const std::string& value);

}  // namespace tandem
