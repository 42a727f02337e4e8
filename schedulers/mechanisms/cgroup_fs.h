// Small helpers over the cgroup file systems (v1 and v2) shared by the scheduler modules that use cgroups.
#pragma once

#include <optional>
#include <string>

namespace tandem {

// Where cgroup v2 is mounted (e.g. /sys/fs/cgroup or /sys/fs/cgroup/unified), or nothing.
std::optional<std::string> cgroup_v2_mount();

// Where the cgroup v1 hierarchy holding `controller` (e.g. "cpu") is mounted, or nothing.
std::optional<std::string> cgroup_v1_mount(const std::string& controller);

// Writes `value` to a cgroup (or any sysfs/procfs) file in one write(2); false if that failed.
bool write_file(const std::string& path, const std::string& value);

}  // namespace tandem
