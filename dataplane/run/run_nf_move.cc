// An NF moved to another core while a service's traffic flows: a re-layout (run_relayout.cc) by a fresh module of
// the running scheduler, planned with the NF on its new core. The entries are held, the NFs drain, the old processes
// leave and the new ones start, the NF's among them on that core; nothing is lost, the traffic pauses for the drain
// and the start. Refused with nothing changed where the re-layout cannot be made or the core is not one to move to.
#include <set>
#include <string>

#include <rte_cycles.h>

#include "run.h"

namespace tandem {

void Run::move_nf(const json& command, double now_s) {
  auto refuse = [&](const std::string& field, const std::string& message) {
    answer_change(change_refusal(command, field, message));
  };
  if (relayout_) return refuse("core", "the NFs are being laid out anew: move once that is answered");
  const json& named = command.contains("nf") ? command["nf"] : json();
  std::string name = named.is_string() ? named.get<std::string>() : std::string();
  const NfConfig* found = nullptr;
  for (const NfConfig& nf : d_.nfs)
    if (nf.name == name && !chain_removed_[nf.chain]) found = &nf;
  if (found == nullptr) return refuse("nf", "no NF named '" + name + "' runs in this service");
  const NfConfig& nf = *found;
  const json& wanted = command.contains("core") ? command["core"] : json();
  if (!wanted.is_number_integer()) return refuse("core", "a core is a whole number");
  int core = wanted.get<int>();
  // The service's NF cores, or another that the control plane checked the machine gives Tandem (it reserves it for
  // the NFs once the move is applied: launch/live_links.py); never the control core.
  std::set<int> cores = nf_cores(d_);
  bool machine_core = command.contains("machine_core") && command["machine_core"] == true;
  if (core == d_.control_core || (!cores.count(core) && !machine_core))
    return refuse("core",
                  "core " + std::to_string(core) + " is not one of the service's NF cores (" + core_list(cores) + ")");
  if (core == nf.core) return refuse("core", "NF '" + nf.name + "' is on core " + std::to_string(core) + " already");
  // An application keeps its process through a re-layout (run_relayout.cc), pinned where it started.
  if (nf.external())
    return refuse("nf", "NF '" + nf.name + "' is an unmodified application: its process stays on its core");
  if (!attached_) return refuse("core", "an NF is restarting: move once it is back");
  if (std::string why = why_no_relayout(); !why.empty())
    return refuse("core", "the NFs cannot be laid out anew now: " + why);

  const SchedulerType& type = scheduler_types().at(d_.scheduler.name);
  Deployment trial = d_;
  trial.nfs[nf.index].core = core;
  SpecErrors errors;
  if (type.check) type.check(trial, errors);
  if (!errors.empty()) return refuse("core", errors.front().message);
  if (std::string need = unprepared_need(type, trial); !need.empty()) return refuse("core", need);
  std::unique_ptr<Scheduler> next = type.create(d_.scheduler.options);
  std::vector<WorkerPlan> plan = relayout_plan(*next, trial);
  start_relayout({.command = command,
                  .name = d_.scheduler.name,
                  .options = d_.scheduler.options,
                  .before = scheduler_entry(),
                  .next = std::move(next),
                  .plan = std::move(plan),
                  .requested_s = now_s,
                  .requested_tsc = rte_get_tsc_cycles(),
                  .ring_drops_before = ring_drops_each(),
                  .field = "core",
                  .moved_nf = nf.index,
                  .moved_from = nf.core,
                  .moved_to = core});
}

}  // namespace tandem
