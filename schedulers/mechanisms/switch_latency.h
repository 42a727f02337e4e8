// Measures each process-controller backend's switch latency: from the call until the other NF is seen running.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "contract/arg_schema.h"

namespace tandem {

// Two idle workers spinning on one core; a worker's heartbeat moves only while it runs. Each round parks
// the running one and activates the other, and times until the other's heartbeat moves.
struct SwitchProbeTarget {
  pid_t pid;
  const uint64_t* heartbeat;
};

json measure_switch_latency(const std::vector<std::string>& backends, SwitchProbeTarget a, SwitchProbeTarget b,
                            const std::string& cgroup_dir, uint32_t rounds);

}  // namespace tandem
