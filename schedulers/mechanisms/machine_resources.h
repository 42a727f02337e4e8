// The machine resources a scheduler module or probe may need for a run, declared once: names, meanings, and a run's
// set.
#pragma once

#include <map>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace tandem {

enum class MachineResource {
  RtUnthrottled,
  RrTimesliceMs,
  CgroupV2Dir,
  CpuCgroupDir,
  CycleCosts,
  SwitchCosts,
  Tracefs,
  KernelLinks,
  ReservedCores
};

struct MachineResourceInfo {
  MachineResource resource;
  const char* name;  // what the control plane knows it by (controlplane/machine/resources.py provides each)
  const char* what;
};

// Every resource, once. `--catalog` lists them, and a test checks that the control plane provides each.
inline constexpr MachineResourceInfo kMachineResources[] = {
    {MachineResource::RtUnthrottled, "rt_unthrottled",
     "sched_rt_runtime_us = -1 for the run: busy real-time pollers are otherwise stalled 50 ms a second"},
    {MachineResource::RrTimesliceMs, "rr_timeslice_ms",
     "/proc/sys/kernel/sched_rr_timeslice_ms set to the value for the run"},
    {MachineResource::CgroupV2Dir, "cgroup_v2_dir",
     "a cgroup v2 directory for the run (paths.cgroup_dir; cgroup.freeze is v2's alone), removed with everything in "
     "it"},
    {MachineResource::CpuCgroupDir, "cpu_cgroup_dir",
     "a cgroup directory with the cpu controller for the run (paths.cpu_cgroup_dir), removed likewise; the value names "
     "the hierarchy ({hierarchy: v1 or v2, root}): v1 where the host binds cpu to a v1 hierarchy, else v2 with +cpu "
     "written to its root's cgroup.subtree_control for the run (taken back after); exit 2 where neither offers cpu"},
    {MachineResource::CycleCosts, "cycle_costs",
     "every NF's cost_cycles, from the cycle estimator or the spec, filled in before launch"},
    {MachineResource::SwitchCosts, "switch_costs",
     "the scheduler's switch-cost options the spec leaves unset, from this machine's switches measured once and "
     "cached (tandem-primitives --switch-costs), filled in before launch"},
    {MachineResource::Tracefs, "tracefs",
     "tracefs at /sys/kernel/tracing where it is not mounted (the system-call tracepoint), unmounted after"},
    {MachineResource::KernelLinks, "kernel_links",
     "a kernel-I/O chain's network namespaces, veths and switch (chains[].io filled in), removed after"},
    {MachineResource::ReservedCores, "reserved_cores",
     "the NFs' cores taken out of every other task's CPU affinity for the run, given back after"},
};

inline const char* resource_name(MachineResource resource) {
  for (const MachineResourceInfo& info : kMachineResources)
    if (info.resource == resource) return info.name;
  throw std::logic_error("a machine resource missing from kMachineResources");
}

// What one run needs: each resource at most once, with a value (true, or a number such as the timeslice).
class MachineRequirements {
 public:
  MachineRequirements() = default;
  explicit MachineRequirements(MachineResource resource, nlohmann::json value = true) {
    need(resource, std::move(value));
  }

  // Needs `resource`; a resource already needed keeps its first value.
  MachineRequirements& need(MachineResource resource, nlohmann::json value = true) {
    needed_.emplace(resource, std::move(value));
    return *this;
  }
  MachineRequirements& need_if(bool condition, MachineResource resource, nlohmann::json value = true) {
    return condition ? need(resource, std::move(value)) : *this;
  }
  bool needs(MachineResource resource) const { return needed_.count(resource) != 0; }

  // Both sets of needs at once (a scheduler's and a probe's); of two values for one resource, the first.
  MachineRequirements& operator|=(const MachineRequirements& other) {
    for (const auto& [resource, value] : other.needed_) need(resource, value);
    return *this;
  }

  // {name: value} of the resources needed, as the control plane reads them.
  nlohmann::json to_json() const {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [resource, value] : needed_) out[resource_name(resource)] = value;
    return out;
  }

 private:
  std::map<MachineResource, nlohmann::json> needed_;
};

}  // namespace tandem
