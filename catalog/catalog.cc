// The catalog: NF types and scheduler modules as JSON, and the checks of a deployment against their schemas.
#include "catalog.h"

#include "contract/batch.h"
#include "contract/packet_meta.h"
#include "contract/run_timing.h"
#include "contract/shm_layout.h"
#include "nfs/nf.h"

namespace tandem {

namespace {
// "a, b, c": the names of a registry's entries that pass `keep`, for error messages.
template <typename Registry, typename Keep>
std::string names_of(const Registry& registry, Keep keep) {
  std::string names;
  for (const auto& [name, type] : registry)
    if (keep(type)) names += (names.empty() ? "" : ", ") + name;
  return names;
}
constexpr auto kAll = [](const auto&) { return true; };
}  // namespace

json catalog_json() {
  json nfs = json::array(), schedulers = json::array();
  for (const auto& [name, type] : nf_types())
    nfs.push_back({{"name", name}, {"help", type.help}, {"descriptor", type.descriptor.to_json()}, {"args", describe_args(type.args)}});
  for (const auto& [name, type] : scheduler_types())
    schedulers.push_back({{"name", name}, {"help", type.help}, {"options", describe_args(type.options)}});
  // What the control plane must know of the data plane's sizes and timing, from the one place they are set.
  json limits = {{"max_hops", kMaxHops}, {"max_nfs", kMaxNfs}, {"max_chains", kMaxChains}, {"max_burst", kMaxBurst},
                 {"attach_seconds", kAttachSeconds}, {"attach_seconds_per_worker", kAttachSecondsPerWorker},
                 {"stop_seconds", kStopSeconds}};
  json resources = json::array();
  for (const MachineResourceInfo& info : kMachineResources) resources.push_back({{"name", info.name}, {"what", info.what}});
  return {{"nfs", nfs}, {"schedulers", schedulers}, {"limits", limits}, {"machine_resources", resources}};
}

json check_report(Deployment& deployment, const MachineRequirements& more) {
  SpecErrors errors = check_deployment(deployment);
  json out = {{"errors", json::array()}};
  for (const SpecError& e : errors) out["errors"].push_back({{"path", e.path}, {"message", e.message}});
  if (!errors.empty()) return out;
  MachineRequirements needs = scheduler_types().at(deployment.scheduler.name).requirements(deployment.scheduler.options);
  needs |= more;
  out["requirements"] = needs.to_json();
  // Each mbuf takes ~2.4 KB with its headroom and metadata; leave room for rings and EAL's own heap.
  out["hugepages_2mb"] = 96 + static_cast<uint64_t>(mbuf_pool_size(deployment)) * 2560 / (2u << 20);
  out["options"] = deployment.scheduler.options;
  return out;
}

SpecErrors check_deployment(Deployment& deployment) {
  SpecErrors errors;
  for (NfConfig& nf : deployment.nfs) {
    std::string path = spec_path(nf);
    auto type = nf_types().find(nf.type);
    if (type == nf_types().end()) {
      errors.push_back({path + ".type", "unknown NF type '" + nf.type + "' (known: " + names_of(nf_types(), kAll) + ")"});
      continue;
    }
    size_t before = errors.size();
    nf.args = resolve_args(type->second.args, nf.args, path + ".args", errors);
    if (errors.size() == before && type->second.check) type->second.check(nf.args, path + ".args", errors);
  }
  auto scheduler = scheduler_types().find(deployment.scheduler.name);
  if (scheduler != scheduler_types().end() && !scheduler->second.external_nfs) {
    std::string able = names_of(scheduler_types(), [](const SchedulerType& type) { return type.external_nfs; });
    for (const NfConfig& nf : deployment.nfs)
      if (nf.external())
        errors.push_back({spec_path(nf) + ".type", "external NF '" + nf.name + "' cannot run under " + deployment.scheduler.name +
                                                       ", which runs NFs inside Tandem's workers (external NFs run under: " + able + ")"});
  }
  if (scheduler == scheduler_types().end()) {
    errors.push_back({"scheduler.name", "unknown scheduler '" + deployment.scheduler.name + "' (known: " + names_of(scheduler_types(), kAll) + ")"});
  } else {
    size_t before = errors.size();
    deployment.scheduler.options = resolve_args(scheduler->second.options, deployment.scheduler.options, "scheduler", errors);
    if (errors.size() == before && scheduler->second.check) scheduler->second.check(deployment, errors);
  }
  return errors;
}

}  // namespace tandem
