// The catalog: NF types and scheduler modules as JSON, and the checks of a deployment against their schemas.
#include "catalog.h"

#include <algorithm>
#include <set>

#include "contract/batch.h"
#include "contract/hop_trace.h"
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
std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "" : ", ") + word;
  return out;
}
}  // namespace

json catalog_json() {
  json nfs = json::array(), schedulers = json::array();
  for (const auto& [name, type] : nf_types())
    nfs.push_back({{"name", name},
                   {"help", type.help},
                   {"descriptor", type.descriptor.to_json()},
                   {"args", describe_args(type.args)}});
  for (const auto& [name, type] : scheduler_types())
    schedulers.push_back({{"name", name}, {"help", type.help}, {"options", describe_args(type.options)}});
  // What the control plane must know of the data plane's sizes and timing, from the one place they are set.
  json limits = {{"max_hops", kMaxHops},
                 {"max_nfs", kMaxNfs},
                 {"max_chains", kMaxChains},
                 {"max_burst", kMaxBurst},
                 {"max_kernel_mux", kMaxKernelMux},
                 {"attach_seconds", kAttachSeconds},
                 {"attach_most_seconds", kAttachMostSeconds},
                 {"stop_seconds", kStopSeconds}};
  json resources = json::array();
  for (const MachineResourceInfo& info : kMachineResources)
    resources.push_back({{"name", info.name}, {"what", info.what}});
  return {{"nfs", nfs}, {"schedulers", schedulers}, {"limits", limits}, {"machine_resources", resources}};
}

json check_report(Deployment& deployment, const MachineRequirements& more) {
  SpecErrors errors = check_deployment(deployment);
  json out = {{"errors", json::array()}};
  for (const SpecError& e : errors) out["errors"].push_back({{"path", e.path}, {"message", e.message}});
  if (!errors.empty()) return out;
  MachineRequirements needs = scheduler_requirements(scheduler_types().at(deployment.scheduler.name), deployment);
  for (const ChainConfig& chain : deployment.chains) needs.need_if(chain.io.enabled, MachineResource::KernelLinks);
  needs |= more;
  out["requirements"] = needs.to_json();
  // Each mbuf takes ~2.4 KB with its headroom and metadata; leave room for rings and EAL's own heap.
  out["hugepages_2mb"] = 96 + static_cast<uint64_t>(mbuf_pool_size(deployment)) * 2560 / (2u << 20) +
                         (deployment.trace_hops ? trace_zone_bytes(deployment) / (2u << 20) + 1 : 0);
  out["options"] = deployment.scheduler.options;
  return out;
}

namespace {

// A parallel group's branches process one packet at once (μNF): an NF in them may not drop it (the packet would
// be lost for every branch), and two NFs of different branches may not touch a field the other reads or writes.
void check_parallel_group(const Deployment& deployment, const NfConfig& fork, SpecErrors& errors) {
  const std::vector<std::vector<int>>& branches = fork.branches;
  auto descriptor = [](const NfConfig& nf) -> const NfDescriptor* {
    auto type = nf_types().find(nf.type);
    return type == nf_types().end() ? nullptr : &type->second.descriptor;
  };
  for (const std::vector<int>& branch : branches)
    for (int index : branch) {
      const NfConfig& nf = deployment.nfs[index];
      if (nf.external())
        errors.push_back({nf.spec_path, "external NF '" + nf.name + "' cannot run in a parallel branch (after " +
                                            fork.name + "): it stamps no hops and keeps no counters of its own"});
      else if (const NfDescriptor* d = descriptor(nf); d && d->may_drop)
        errors.push_back({nf.spec_path, "NF '" + nf.name + "' (" + nf.type +
                                            ") may drop packets, so it cannot run in a parallel branch (after " +
                                            fork.name + "): a dropped copy loses the packet for every branch"});
    }
  for (size_t a = 0; a < branches.size(); a++)
    for (size_t b = a + 1; b < branches.size(); b++)
      for (int one : branches[a])
        for (int other : branches[b]) {
          const NfDescriptor* x = descriptor(deployment.nfs[one]);
          const NfDescriptor* y = descriptor(deployment.nfs[other]);
          if (!x || !y || x->may_drop || y->may_drop || may_run_in_parallel(*x, *y)) continue;
          FieldSet shared = (x->writes & (y->reads | y->writes)) | (y->writes & (x->reads | x->writes));
          errors.push_back({deployment.nfs[other].spec_path,
                            "'" + deployment.nfs[one].name + "' and '" + deployment.nfs[other].name +
                                "' are in parallel branches (after " + fork.name +
                                ") but one writes what the other reads or writes (" + join(shared.names()) +
                                "): they cannot process one packet at once"});
        }
}

// What only the NF types can tell of a chain's graph: a labelled fan-out's labels are gates of its NF, every
// gate has an edge, and an external application (one port) sits at no join and no fan-out.
void check_graph_against_types(const Deployment& deployment, SpecErrors& errors) {
  for (const NfConfig& nf : deployment.nfs) {
    if (nf.external() && (nf.in_rings.size() > 1 || nf.out_rings.size() > 1))
      errors.push_back(
          {nf.spec_path,
           "external NF '" + nf.name + "' has one port (one ring in, one out): it cannot sit at a join or a fan-out"});
    auto type = nf_types().find(nf.type);
    if (type == nf_types().end()) continue;  // said already
    const std::vector<std::string> gates = nf_gates(type->second, nf.args);
    std::set<std::string> labels;
    for (int ring : nf.out_rings) {
      const RingConfig& edge = deployment.rings[ring];
      if (edge.label.empty()) continue;
      labels.insert(edge.label);
      if (gates.empty())
        errors.push_back({edge.spec_path + ".label",
                          "NF type " + nf.type + " has one output: the edges out of " + nf.name + " take no label"});
      else if (std::find(gates.begin(), gates.end(), edge.label) == gates.end())
        errors.push_back({edge.spec_path + ".label",
                          "'" + edge.label + "' is not a gate of " + nf.type + " (gates: " + join(gates) + ")"});
    }
    if (nf.forks()) check_parallel_group(deployment, nf, errors);
    if (labels.empty() || gates.empty()) continue;
    for (const std::string& gate : gates)
      if (!labels.count(gate))
        errors.push_back({nf.spec_path, "gate '" + gate + "' of " + nf.name + " (" + nf.type +
                                            ") has no edge: label one of its edges with it, "
                                            "or its packets are lost"});
  }
}

// A chain with kernel-I/O NFs (all of them, or some beside DPDK NFs) is a line of NFs, each in its own process
// and network namespace, under a scheduler that schedules processes from outside.
void check_kernel_chains(const Deployment& deployment, SpecErrors& errors) {
  auto scheduler = scheduler_types().find(deployment.scheduler.name);
  for (const ChainConfig& chain : deployment.chains) {
    if (!chain.io.enabled) continue;
    std::string where = "chains[" + std::to_string(chain.index) + "]";
    if (chain.io.mux < 1 || chain.io.mux > kMaxKernelMux)
      errors.push_back({where + ".mux", "mux is the frames per system call: 1 to " + std::to_string(kMaxKernelMux)});
    if (chain.io.link != "b2b" && chain.io.link != "bridge" && chain.io.link != "ovs" &&
        chain.io.link != "ovs-userspace")
      errors.push_back({where + ".link", "unknown link '" + chain.io.link + "' (b2b, bridge, ovs or ovs-userspace)"});
    for (int nf : chain.nfs) {
      const NfConfig& config = deployment.nfs[nf];
      if (config.in_rings.size() > 1 || config.out_rings.size() > 1 || config.forks())
        errors.push_back({config.spec_path, "a chain with kernel-I/O NFs (io: kernel) is a line of NFs: " +
                                                config.name + " has several edges in or out"});
      if (config.external() &&
          (any_kernel_link(deployment, config.in_rings) || any_kernel_link(deployment, config.out_rings)))
        errors.push_back({config.spec_path + ".type",
                          "an external NF cannot have a kernel link (it speaks DPDK): put a DPDK NF between it and the "
                          "kernel-I/O NF"});
    }
    if (scheduler != scheduler_types().end() && !scheduler->second.kernel_io_nfs) {
      std::string able = names_of(scheduler_types(), [](const SchedulerType& type) { return type.kernel_io_nfs; });
      errors.push_back(
          {where + ".io",
           "chain " + chain.name + " has kernel-I/O NFs, which " + deployment.scheduler.name +
               " cannot schedule (it needs rings or the NFs' cooperation); kernel-I/O chains run under: " + able});
    }
  }
}

// Every DPDK process of a run needs lcore ids no other process of the run uses (the mbuf pool keeps a cache per lcore
// id, in memory they all share): the manager one, each worker one, and an external NF's application a second for its
// main thread. DPDK has RTE_MAX_LCORE of them; a worker beyond that fails in its EAL start-up.
void check_lcore_ids(const Deployment& deployment, const SchedulerType& scheduler, SpecErrors& errors) {
  std::vector<WorkerPlan> workers = scheduler.create(deployment.scheduler.options)->plan_workers(deployment);
  size_t needed = 1 + workers.size();
  for (const WorkerPlan& plan : workers) needed += plan.runtime == Runtime::External ? 1 : 0;
  if (needed <= RTE_MAX_LCORE) return;
  errors.push_back(
      {"chains", deployment.scheduler.name + " would start " + std::to_string(workers.size()) +
                     " worker processes, which with the manager (and each external NF's main thread) need " +
                     std::to_string(needed) + " DPDK lcore ids; this DPDK has " + std::to_string(RTE_MAX_LCORE) +
                     " (RTE_MAX_LCORE): run fewer NFs, or rtc or bubble, which run a core's NFs in one "
                     "process"});
}

}  // namespace

SpecErrors check_deployment(Deployment& deployment, const std::vector<bool>& chain_removed) {
  SpecErrors errors;
  bool added_live = !chain_removed.empty();
  if (std::optional<std::string> full = beyond_stats_zone(deployment, chain_removed))
    errors.push_back({added_live ? "chain" : "chains", *full});
  for (NfConfig& nf : deployment.nfs) {
    std::string path = spec_path(nf);
    auto type = nf_types().find(nf.type);
    if (type == nf_types().end()) {
      errors.push_back(
          {path + ".type", "unknown NF type '" + nf.type + "' (known: " + names_of(nf_types(), kAll) + ")"});
      continue;
    }
    size_t before = errors.size();
    nf.args = resolve_args(type->second.args, nf.args, path + ".args", errors);
    if (errors.size() == before && type->second.check) type->second.check(nf.args, path + ".args", errors);
  }
  check_graph_against_types(deployment, errors);
  check_kernel_chains(deployment, errors);
  auto scheduler = scheduler_types().find(deployment.scheduler.name);
  if (scheduler != scheduler_types().end() && !scheduler->second.external_nfs) {
    std::string able = names_of(scheduler_types(), [](const SchedulerType& type) { return type.external_nfs; });
    for (const NfConfig& nf : deployment.nfs)
      if (nf.external())
        errors.push_back({spec_path(nf) + ".type",
                          "external NF '" + nf.name + "' cannot run under " + deployment.scheduler.name +
                              ", which runs NFs inside Tandem's workers (external NFs run under: " + able + ")"});
  }
  if (scheduler == scheduler_types().end()) {
    errors.push_back({"scheduler.name", "unknown scheduler '" + deployment.scheduler.name +
                                            "' (known: " + names_of(scheduler_types(), kAll) + ")"});
  } else {
    size_t before = errors.size();
    deployment.scheduler.options =
        resolve_args(scheduler->second.options, deployment.scheduler.options, "scheduler", errors);
    if (errors.size() == before && scheduler->second.check) scheduler->second.check(deployment, errors);
    if (errors.empty() && !added_live) check_lcore_ids(deployment, scheduler->second, errors);
  }
  return errors;
}

}  // namespace tandem
