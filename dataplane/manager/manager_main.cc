// tandem-manager: the data plane's entry point for the control plane.
//   --catalog            print the NF types and scheduler modules with their arguments (JSON)
//   --check CONFIG       check NF arguments and scheduler options; print errors, machine needs, memory (JSON)
//   --run CONFIG [--events-fd N]   run the deployment; progress and events as JSON lines on fd N (default 1)
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "dataplane/deployment.h"
#include "manager.h"
#include "nfs/nf.h"
#include "schedulers/scheduler.h"

using namespace tandem;

namespace {

json catalog() {
  json nfs = json::array(), schedulers = json::array();
  for (const auto& [name, type] : nf_types()) nfs.push_back({{"name", name}, {"help", type.help}, {"args", describe_args(type.args)}});
  for (const auto& [name, type] : scheduler_types())
    schedulers.push_back({{"name", name}, {"help", type.help}, {"options", describe_args(type.options)}});
  return {{"nfs", nfs}, {"schedulers", schedulers}};
}

json check(const json& doc) {
  Deployment deployment = parse_deployment(doc);
  SpecErrors errors = check_deployment(deployment);
  json out = {{"errors", json::array()}};
  for (const SpecError& e : errors) out["errors"].push_back({{"path", e.path}, {"message", e.message}});
  if (!errors.empty()) return out;
  MachineRequirements needs = scheduler_types().at(deployment.scheduler.name).requirements(deployment.scheduler.options);
  // The switch-latency probe drives the freezer backend too, whatever the run's scheduler.
  if (deployment.profile.is_object() && deployment.profile.contains("switch_latency")) needs.cgroup_v2_dir = true;
  out["requirements"] = {{"rt_unthrottled", needs.rt_unthrottled},
                         {"rr_timeslice_ms", needs.rr_timeslice_ms ? json(*needs.rr_timeslice_ms) : json()},
                         {"cgroup_v2_dir", needs.cgroup_v2_dir},
                         {"cycle_costs", needs.cycle_costs},
                         {"cgroup_v1_cpu_dir", needs.cgroup_v1_cpu_dir}};
  // Each mbuf takes ~2.4 KB with its headroom and metadata; leave room for rings and EAL's own heap.
  out["hugepages_2mb"] = 96 + static_cast<uint64_t>(mbuf_pool_size(deployment)) * 2560 / (2u << 20);
  out["options"] = deployment.scheduler.options;
  return out;
}

json read_json(const char* path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error(std::string("cannot read ") + path);
  return json::parse(file);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "--catalog") == 0) {
    printf("%s\n", catalog().dump(2).c_str());
    return 0;
  }
  try {
    if (argc >= 3 && strcmp(argv[1], "--check") == 0) {
      printf("%s\n", check(read_json(argv[2])).dump(2).c_str());
      return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "--run") == 0) {
      // The control plane starts us in our own session; if it dies, we must stop and clean up too.
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      // Our stdout is the run's log file: line-buffered, so a manager that is killed leaves the lines it wrote.
      setvbuf(stdout, nullptr, _IOLBF, 0);
      int events_fd = STDOUT_FILENO;
      if (argc >= 5 && strcmp(argv[3], "--events-fd") == 0) events_fd = atoi(argv[4]);
      FILE* events = fdopen(events_fd, "w");
      if (events == nullptr) throw std::runtime_error("cannot open the events descriptor");
      return run_deployment(read_json(argv[2]), events);
    }
  } catch (const std::exception& e) {
    fprintf(stderr, "tandem-manager: %s\n", e.what());
    return kExitBadSpec;
  }
  fprintf(stderr, "usage: tandem-manager --catalog | --check CONFIG | --run CONFIG [--events-fd N]\n");
  return kExitBadSpec;
}
