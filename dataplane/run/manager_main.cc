// tandem-manager: the data plane's entry point for the control plane.
//   --catalog            print the NF types and scheduler modules with their arguments (JSON)
//   --check CONFIG       check NF arguments and scheduler options; print errors, machine needs, memory (JSON)
//   --run CONFIG [--events-fd N] [--commands-fd M]   run the deployment; progress and events as JSON lines on fd N
//                        (default 1); a service's live changes as JSON lines from fd M (run_live_changes.cc)
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "catalog/catalog.h"
#include "dataplane/observation/probe.h"
#include "run_lifecycle.h"

using namespace tandem;

namespace {

json catalog_with_probes() {
  json out = catalog_json();
  out["probes"] = probe_catalog();
  return out;
}

json check(const json& doc) {
  Deployment deployment = parse_deployment(doc);
  return check_report(deployment, probe_requirements(deployment.profile));
}

json read_json(const char* path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error(std::string("cannot read ") + path);
  return json::parse(file);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "--catalog") == 0) {
    printf("%s\n", catalog_with_probes().dump(2).c_str());
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
      int events_fd = STDOUT_FILENO, commands_fd = -1;
      for (int i = 3; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--events-fd") == 0) events_fd = atoi(argv[i + 1]);
        if (strcmp(argv[i], "--commands-fd") == 0) commands_fd = atoi(argv[i + 1]);
      }
      FILE* events = fdopen(events_fd, "w");
      if (events == nullptr) throw std::runtime_error("cannot open the events descriptor");
      return run_deployment(read_json(argv[2]), events, commands_fd);
    }
  } catch (const std::exception& e) {
    fprintf(stderr, "tandem-manager: %s\n", e.what());
    return kExitBadSpec;
  }
  fprintf(stderr,
          "usage: tandem-manager --catalog | --check CONFIG | --run CONFIG [--events-fd N] [--commands-fd M]\n");
  return kExitBadSpec;
}
