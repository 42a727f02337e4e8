// external: declares the arguments of an unmodified DPDK application run as an NF. Tandem never links it or
// asks it anything: the manager gives it a ring-backed ethdev port (dataplane/run/external_nf.h).
#include "external.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "contract/deployment.h"
#include "nf.h"

namespace tandem {

std::string resolve_executable(const std::string& binary) {
  if (binary.find('/') != std::string::npos) return access(binary.c_str(), X_OK) == 0 ? binary : "";
  const char* path = getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + binary;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

namespace {

void check(const json& args, const std::string& path, SpecErrors& errors) {
  std::string binary = args["binary"];
  if (resolve_executable(binary).empty())
    errors.push_back({path + ".binary",
                      "'" + binary + "' is not an executable file here (testpmd comes with Debian's package dpdk)"});
}

const NfRegistration registration({
    .name = kExternalNfType,
    .help =
        "An unmodified DPDK application in its own process, forwarding between a ring-backed port the manager makes "
        "(testpmd in io or macswap mode). Runs under the kernel policies and unis; it stamps no hops.",
    .args =
        {
            {.name = "app",
             .type = ArgType::Choice,
             .default_value = "testpmd",
             .help = "the application",
             .choices = {"testpmd"}},
            {.name = "binary",
             .type = ArgType::String,
             .default_value = "dpdk-testpmd",
             .help = "its executable (path or name on PATH)"},
            {.name = "forward_mode",
             .type = ArgType::Choice,
             .default_value = "io",
             .help = "testpmd's forwarding mode: io passes packets on, macswap swaps their MAC addresses",
             .choices = {"io", "macswap"}},
        },
    .check = check,
    .create = [](const json&, const NfContext& context) -> std::unique_ptr<NetworkFunction> {
      throw std::logic_error("NF " + context.name + " is external: it runs in its own process, not in a Tandem worker");
    },
    .descriptor = {.stateful = true,
                   .may_drop = true,
                   .random = true,
                   .reads = FieldSet::all(),
                   .writes = FieldSet::all()},  // unknown: assume all
});

}  // namespace
}  // namespace tandem
