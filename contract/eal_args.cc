// EAL command lines shared by the manager and the workers.
#include "eal_args.h"

#include <sched.h>
#include <sys/personality.h>

#include <cerrno>
#include <cstring>

namespace tandem {

namespace {
// `pci`: the PCI devices this process probes (none: the PCI bus is not scanned at all).
std::vector<std::string> common_args(const Deployment& d, int lcore_id, int core, const std::vector<std::string>& pci) {
  std::vector<std::string> args = {"--file-prefix=" + d.paths.file_prefix, "--huge-dir=" + d.paths.huge_dir,
                                   "--lcores=" + std::to_string(lcore_id) + "@" + std::to_string(core),
                                   "--no-telemetry", "--log-level=lib.eal:error"};
  if (pci.empty()) args.push_back("--no-pci");
  for (const std::string& address : pci) args.push_back("--allow=" + address);
  return args;
}
}  // namespace

std::vector<std::string> primary_eal_args(const Deployment& d) {
  // Only the manager opens ports (its Rx and Tx stages); the PCI devices the spec names, and no other.
  std::vector<std::string> pci;
  for (const PortConfig& port : d.ports)
    if (port.pci()) pci.push_back(port.device);
  std::vector<std::string> args = {"tandem-manager", "--proc-type=primary"};
  for (auto& a : common_args(d, 0, d.control_core, pci)) args.push_back(a);
  return args;
}

std::vector<std::string> secondary_eal_args(const Deployment& d, const WorkerPlan& worker) {
  std::vector<std::string> args = {"tandem-worker", "--proc-type=secondary"};
  for (auto& a : common_args(d, worker.lcore_id, worker.core, {})) args.push_back(a);
  return args;
}

void without_address_randomisation() {
  int current = personality(0xffffffff);  // reads the persona without changing it
  if (current != -1) personality(static_cast<unsigned long>(current) | ADDR_NO_RANDOMIZE);
}

std::string confine_to_control_core(int control_core, pid_t pid) {
  if (std::string error = pin_to_core(pid, control_core); !error.empty())
    return "cannot confine " + (pid == 0 ? std::string("the manager") : "pid " + std::to_string(pid)) +
           " to control core " + std::to_string(control_core) + ": " + error;
  return "";
}

std::string pin_to_core(pid_t task, int core) {
  cpu_set_t cores{};
  CPU_ZERO(&cores);
  CPU_SET(core, &cores);
  if (sched_setaffinity(task, sizeof cores, &cores) == 0) return "";
  return strerror(errno);
}

std::string ring_object_name(int ring_index) { return "tandem_ring_" + std::to_string(ring_index); }

std::string ring_object(const RingConfig& ring) {
  return ring.object.empty() ? ring_object_name(ring.index) : ring.object;
}

}  // namespace tandem
