// Live changes of a service (`./tandem serve`): commands from the control plane, one JSON line each on the commands
// descriptor, read between the control loop's turns; each answered by a `change` event once it took effect, or at
// once when refused (naming the field), so a change is either whole or not made at all.
//   {"id": N, "op": "set_args", "nf": NAME, "args": {...}}: the NF's (and its scaled instances') new arguments,
//     checked as the spec's are, then built by its runtime beside the running instance and swapped in between two
//     batches (dataplane/runtimes/live_args.h);
//   {"id": N, "op": "set_scheduler", "scheduler": {"name": NAME, "options": {...}}}: the old module detached (what it
//     did to the machine undone), the workers' hints made neutral, the new one attached, all between two turns of
//     the loop; only where the new module lays the workers out as they are and needs nothing the run did not prepare;
//   {"id": N, "op": "set_instances", ...}, {"id": N, "op": "remove_chain", ...} (run_chain_removal.cc),
//     {"id": N, "op": "add_chain", "chain": {...}} (run_chain_addition.cc), {"id": N, "op": "add_port", "port":
//     {...}} (run_port_addition.cc), {"id": N, "op": "remove_port", "port": NAME} (run_port_removal.cc) and
//     {"id": N, "op": "move_nf", "nf": NAME, "core": N} (run_nf_move.cc).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <rte_cycles.h>

#include "contract/live_args_files.h"
#include "nfs/nf.h"
#include "run.h"
#include "schedulers/per_core/core_choices.h"
#include "schedulers/per_core/core_switch.h"

namespace tandem {

json change_refusal(const json& command, const std::string& field, const std::string& message) {
  json reply = {{"event", "change"},
                {"id", command.value("id", json())},
                {"op", command.value("op", json())},
                {"state", "refused"},
                {"errors", json::array({{{"path", field}, {"message", message}}})}};
  // What the request named, as an applied answer names it, so that a list of changes says what each refused one
  // was about: its NF, or the scheduler asked for (by name).
  if (command.contains("nf") && command["nf"].is_string()) reply["nf"] = command["nf"];
  if (command.contains("scheduler") && command["scheduler"].is_object() &&
      command["scheduler"].value("name", json()).is_string())
    reply["scheduler"] = command["scheduler"]["name"];
  return reply;
}

json removal_refusal(const json& command, const char* what, const std::string& message) {
  json reply = change_refusal(command, what, message);
  reply[what] = command.value(what, json());
  return reply;
}

json addition_refusal(const json& command, const char* what, const std::string& field, const std::string& message) {
  json reply = change_refusal(command, field, message);
  if (command.contains(what) && command[what].is_object()) reply[what] = command[what].value("name", "");
  return reply;
}

namespace {

json refusal(const json& command, const SpecErrors& errors) {
  json reply = change_refusal(command, "", "");
  reply["errors"] = json::array();
  for (const SpecError& e : errors) reply["errors"].push_back({{"path", e.path}, {"message", e.message}});
  return reply;
}

// The scheduler a switch asks for as `serve --ready-for` takes it: with the options the request gave, which may be
// what needs more than their defaults (a YAML value each: a string as it is, anything else as JSON).
std::string ready_for_item(const std::string& name, const json& scheduler) {
  std::string item = name;
  const json options = scheduler.value("options", json::object());
  if (!options.is_object()) return item;
  char separator = ':';
  for (const auto& [key, value] : options.items()) {
    item += separator + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
    separator = ',';
  }
  return item;
}

}  // namespace

void Run::open_commands(int fd) {
  commands_fd_ = fd;
  if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  // What the control plane prepared the machine for (the run's module's needs, and those of the modules a service
  // was made ready for); without its word, the run's module's alone.
  provided_requirements_ = original_.contains("prepared")
                               ? original_["prepared"]
                               : scheduler_requirements(scheduler_types().at(d_.scheduler.name), d_).to_json();
  args_generation_.assign(d_.nfs.size(), 0);
  chain_removed_.assign(d_.chains.size(), false);
  if (fd >= 0) change_watch_ = std::make_unique<ChangeWatch>(hz_);
}

void Run::watch_changes(uint64_t now_tsc) {
  if (!change_watch_) return;
  if (change_watch_->due(now_tsc)) {
    uint64_t delivered = 0, fell_behind = 0;
    for (size_t c = 0; c < d_.chains.size(); c++) {
      delivered += sink_->delivery(static_cast<int>(c)).delivered;
      fell_behind += generator_->fell_behind(static_cast<int>(c));
    }
    change_watch_->sample(now_tsc, delivered, ring_drops_now(), fell_behind, sink_->take_recent_max_latency());
  }
  for (json& cost : change_watch_->take_costs(now_tsc)) {
    emit(events_, cost);
    for (json& change : changes_)
      if (change["id"] == cost["id"] && change["state"] == "applied") {
        change["cost"] = cost;
        change["cost"].erase("event");
        change["cost"].erase("id");
      }
  }
}

void Run::answer_applied(json reply, uint64_t requested_tsc) {
  if (change_watch_) change_watch_->watch(reply["id"], requested_tsc, rte_get_tsc_cycles());
  answer_change(std::move(reply));
}

// Read every millisecond (the change watch's samples): no allocation, unlike the by-ring readings a change takes.
uint64_t Run::ring_drops_now() const {
  uint64_t dropped = 0;
  for (size_t r = 0; r < rings_.size(); r++) dropped += counter_read(stats_->rings[r].dropped_full);
  return dropped;
}

RingDrops Run::ring_drops_each() const { return ring_drops_since_each({}); }

RingDrops Run::ring_drops_since_each(const RingDrops& before) const {
  RingDrops since(rings_.size());
  for (size_t r = 0; r < rings_.size(); r++)
    since[r] = counter_read(stats_->rings[r].dropped_full) - (r < before.size() ? before[r] : 0);
  return since;
}

uint64_t Run::ring_drops_since(const RingDrops& before) const {
  uint64_t dropped = 0;
  for (uint64_t ring : ring_drops_since_each(before)) dropped += ring;
  return dropped;
}

json Run::ring_drops_by_ring_since(const RingDrops& before) const {
  json by_ring = json::object();
  RingDrops since = ring_drops_since_each(before);
  for (size_t r = 0; r < since.size(); r++)
    if (since[r] != 0) by_ring[r < d_.rings.size() ? d_.rings[r].name : "ring " + std::to_string(r)] = since[r];
  return by_ring;
}

void Run::answer_change(json reply) {
  // An applied change says when it was asked for and done; a refused one, when it was answered.
  if (!reply.contains("t_done") && go_tsc_ != 0) reply["t_done"] = seconds_since_go(rte_get_tsc_cycles());
  emit(events_, reply);
  changes_.push_back(std::move(reply));
}

void Run::take_commands(double now_s) {
  if (commands_fd_ < 0) return;
  char buffer[4096];
  for (;;) {
    ssize_t n = read(commands_fd_, buffer, sizeof buffer);
    if (n > 0) {
      commands_pending_.append(buffer, static_cast<size_t>(n));
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) commands_fd_ = -1;  // the control plane closed its end
    break;
  }
  // A change may tell processes to exit or stop within this call (a chain's removal): no free of the reclaim's may be
  // under way then, whose IPC they would not answer. The loop's next turn says whether the run is quiet again.
  if (commands_pending_.find('\n') != std::string::npos) reclaim_->set_quiet(false);
  for (size_t end; (end = commands_pending_.find('\n')) != std::string::npos;) {
    std::string line = commands_pending_.substr(0, end);
    commands_pending_.erase(0, end + 1);
    json command = json::parse(line, nullptr, false);
    if (!command.is_object()) {
      answer_change(change_refusal(json::object(), "request", "a command is a JSON object on one line"));
      continue;
    }
    std::string op = command.value("op", std::string());
    if (op == "set_args")
      waiting_args_.emplace_back(std::move(command), now_s);
    else if (op == "set_scheduler")
      switch_scheduler(command, now_s);
    else if (op == "set_instances")
      change_instances(command, now_s);
    else if (op == "remove_chain")
      remove_chain(command, now_s);
    else if (op == "add_chain")
      add_chain(command, now_s);
    else if (op == "add_port")
      add_port(command, now_s);
    else if (op == "remove_port")
      remove_port(command, now_s);
    else if (op == "move_nf")
      move_nf(command, now_s);
    else
      answer_change(change_refusal(command, "op",
                                   "no such change '" + op +
                                       "' (there are: set_args, set_scheduler, set_instances, remove_chain, "
                                       "add_chain, add_port, remove_port, move_nf)"));
  }
  start_waiting_args();
}

void Run::start_waiting_args() {
  if (relayout_) return;       // the NFs' processes are being replaced: the new ones build the arguments
  std::set<std::string> busy;  // NFs with a change in progress, or one asked before that waits
  for (const PendingChange& change : pending_changes_) busy.insert(change.nf);
  for (auto it = waiting_args_.begin(); it != waiting_args_.end();) {
    if (!busy.insert(it->first.value("nf", std::string())).second) {
      ++it;
      continue;
    }
    change_args(it->first, it->second);
    it = waiting_args_.erase(it);
  }
}

void Run::change_args(const json& command, double now_s) {
  std::string name = command.value("nf", std::string());
  std::vector<int> targets;  // the NF and its scaled instances
  for (const NfConfig& nf : d_.nfs)
    if (nf.name == name) targets.push_back(nf.index);
  if (targets.size() == 1)
    for (const NfConfig& nf : d_.nfs)
      if (nf.scale_group == targets[0] && nf.index != targets[0]) targets.push_back(nf.index);
  if (targets.empty()) return answer_change(change_refusal(command, "nf", "no NF named '" + name + "' in this run"));
  const NfConfig& nf = d_.nfs[targets[0]];
  // Its processes are gone (after a re-layout, its NFs are in no worker's plan): whatever the arguments say, the
  // NF named is the request's fault, as one that never was.
  if (chain_removed_[nf.chain])
    return answer_change(
        change_refusal(command, "nf", "'" + name + "' is an NF of chain " + d_.chains[nf.chain].name + ", removed"));
  if (nf.external())
    return answer_change(change_refusal(command, "nf",
                                        "'" + name +
                                            "' is an external application: its arguments are its command line, "
                                            "which a live change does not rewrite"));
  if (!command.contains("args") || !command["args"].is_object())
    return answer_change(change_refusal(command, "args", "the NF's new arguments, an object"));
  const NfType& type = nf_types().at(nf.type);
  SpecErrors errors;
  json resolved = resolve_args(type.args, command["args"], "args", errors);
  if (errors.empty() && type.check) type.check(resolved, "args", errors);
  if (!errors.empty()) return answer_change(refusal(command, errors));
  // The chain's graph is fixed at start: new arguments may not give the NF other output gates.
  if (nf_gates(type, resolved) != nf_gates(type, nf.args))
    return answer_change(change_refusal(command, "args",
                                        "the new arguments give '" + name +
                                            "' other output gates than the chain's graph joins; change the graph by "
                                            "restarting the service"));
  for (int target : targets) {
    if (workers_[place_of_nf(target).worker].exited)
      return answer_change(change_refusal(command, "nf", "the worker of '" + d_.nfs[target].name + "' has exited"));
  }
  uint32_t generation = ++args_generation_[targets[0]];
  for (int target : targets) {
    args_generation_[target] = generation;
    // Whole on disk before the runtime can see the generation.
    std::string path = live_args_path(d_.paths.run_dir, target, generation), partial = path + ".partial";
    std::ofstream(partial) << resolved.dump();
    std::rename(partial.c_str(), path.c_str());
  }
  for (int target : targets) {
    NfPlace place = place_of_nf(target);
    flag_store(stats_->nf_control[target].args_wanted, generation);
    NfControl& head = stats_->nf_control[place.segment_head];
    flag_store(head.segment_changes, flag_load(head.segment_changes) + 1);
    view_->hints.wake(static_cast<size_t>(place.worker));  // a worker asleep on an empty input takes it now
  }
  pending_changes_.push_back({command.value("id", json()), "set_args", name, targets, generation, resolved,
                              type.descriptor.stateful, now_s, rte_get_tsc_cycles(), ring_drops_each()});
}

void Run::follow_changes(double now_s) {
  follow_port_work(now_s);
  follow_relayout(now_s);
  std::error_code ignored;  // a file already gone (generation 0 has none)
  for (auto it = pending_changes_.begin(); it != pending_changes_.end();) {
    const PendingChange& change = *it;
    bool applied = true;
    std::string refused;
    uint64_t build_cycles = 0;
    for (int target : change.nfs) {
      const NfControl& control = stats_->nf_control[target];
      if (flag_load(control.args_refused) == change.generation) {
        std::ifstream file(live_args_refusal_path(d_.paths.run_dir, target, change.generation));
        std::stringstream reason;
        reason << file.rdbuf();
        refused = "the runtime of '" + d_.nfs[target].name + "' could not build it: " + reason.str();
        std::filesystem::remove(live_args_refusal_path(d_.paths.run_dir, target, change.generation), ignored);
      } else if (workers_[place_of_nf(target).worker].exited) {
        refused = "the worker of '" + d_.nfs[target].name + "' exited before it took the new arguments";
      }
      applied = applied && flag_load(control.args_running) == change.generation;
      build_cycles = std::max(build_cycles, counter_read(control.args_build_cycles));
    }
    if (!applied && refused.empty()) {
      // An instance that has not taken it yet may be asleep on an empty input (a parked spare), its build done: woken
      // every housekeeping turn, it runs its loop once and swaps (a no-op for a worker that is awake).
      for (int target : change.nfs)
        if (flag_load(stats_->nf_control[target].args_running) != change.generation)
          view_->hints.wake(static_cast<size_t>(place_of_nf(target).worker));
      ++it;
      continue;
    }
    json reply = {{"event", "change"},
                  {"id", change.id},
                  {"op", change.op},
                  {"nf", change.nf},
                  {"generation", change.generation},
                  {"t_requested", change.requested_s},
                  {"t_done", now_s},
                  {"ring_drops_during", ring_drops_since(change.ring_drops_before)},
                  {"ring_drops_by_ring", ring_drops_by_ring_since(change.ring_drops_before)}};
    if (!refused.empty()) {
      // Instances that took it before one refused it keep it (a scaled NF's builds fail alike, from the same
      // arguments): said here rather than hidden.
      reply["state"] = "refused";
      reply["errors"] = json::array({{{"path", "args"}, {"message", refused}}});
      answer_change(reply);
    } else {
      reply["state"] = "applied";
      reply["build_us"] = static_cast<double>(build_cycles) / hz_ * 1e6;
      reply["state_reset"] = change.stateful;  // a stateful NF's new instance starts with empty tables
      for (int target : change.nfs) {
        d_.nfs[target].args = change.args;
        reclaim_->retire(pids_[place_of_nf(target).worker], target, change.generation);  // its instance before
        uint32_t& kept_from = args_files_from_[target];
        for (; kept_from < change.generation; kept_from++)
          std::filesystem::remove(live_args_path(d_.paths.run_dir, target, kept_from), ignored);
      }
      answer_applied(reply, change.requested_tsc);
    }
    it = pending_changes_.erase(it);
  }
  for (auto it = pending_scales_.begin(); it != pending_scales_.end();) {
    bool made = false;
    uint32_t in_use = autoscaler_->in_use_of(it->nf, &made);
    if (!made) {
      ++it;
      continue;
    }
    answer_applied({{"event", "change"},
                    {"id", it->id},
                    {"op", "set_instances"},
                    {"nf", it->nf},
                    {"state", "applied"},
                    {"instances", in_use},
                    {"instances_before", it->before},
                    {"t_requested", it->requested_s},
                    {"t_done", now_s},
                    {"ring_drops_during", ring_drops_since(it->ring_drops_before)},
                    {"ring_drops_by_ring", ring_drops_by_ring_since(it->ring_drops_before)}},
                   it->requested_tsc);
    it = pending_scales_.erase(it);
  }
  follow_removals(now_s);
  follow_addition(now_s);
}

void Run::change_instances(const json& command, double now_s) {
  std::string name = command.value("nf", std::string());
  const json& asked = command.contains("instances") ? command["instances"] : json();
  std::optional<uint32_t> instances;
  if (asked.is_number_unsigned() && asked.get<uint64_t>() <= 64)
    instances = asked.get<uint32_t>();
  else if (asked != "auto")
    return answer_change(
        change_refusal(command, "instances", "a count of instances, or auto (the rule decides again)"));
  for (const PendingScale& pending : pending_scales_)
    if (pending.nf == name)
      return answer_change(change_refusal(command, "instances",
                                          "its instance count is being changed (to " +
                                              std::to_string(pending.instances) +
                                              "): ask again once that took effect"));
  uint32_t before = autoscaler_->in_use_of(name, nullptr);
  uint64_t begin = rte_get_tsc_cycles();
  RingDrops drops_before = ring_drops_each();
  json decision;
  if (auto refused = autoscaler_->command(name, instances, now_s, &decision))
    return answer_change(change_refusal(command, refused->field, refused->reason));
  if (decision.is_object()) {  // shown as the rule's decisions are
    decision["event"] = "scale";
    emit(events_, decision);
  }
  pending_scales_.push_back(
      {command.value("id", json()), name, instances.value_or(before), before, now_s, begin, drops_before});
}

void Run::refuse_unfinished_changes() {
  const std::string why = "the run ended before the NF's runtime took the new arguments";
  for (const PendingChange& change : pending_changes_)
    answer_change(change_refusal({{"id", change.id}, {"op", change.op}, {"nf", change.nf}}, "args", why));
  for (const auto& [command, requested_s] : waiting_args_) answer_change(change_refusal(command, "args", why));
  for (const PendingScale& scale : pending_scales_)
    answer_change(change_refusal({{"id", scale.id}, {"op", "set_instances"}, {"nf", scale.nf}}, "instances",
                                 "the run ended before the scaled egresses moved the flows"));
  for (const ChainRemoval& removal : removals_) {
    json reply = change_refusal({{"id", removal.id}, {"op", "remove_chain"}}, "chain",
                                "the run ended while the chain drained: it stops with the others");
    reply["chain"] = d_.chains[removal.chain].name;
    answer_change(reply);
  }
  pending_changes_.clear();
  waiting_args_.clear();
  pending_scales_.clear();
  removals_.clear();
}

void Run::switch_scheduler(const json& command, double now_s) {
  if (relayout_)
    return answer_change(change_refusal(command, "scheduler", "a switch is being applied: switch once it is answered"));
  const json scheduler = command.value("scheduler", json::object());
  std::string name = scheduler.is_object() ? scheduler.value("name", std::string()) : std::string();
  auto type = scheduler_types().find(name);
  if (type == scheduler_types().end())
    return answer_change(change_refusal(command, "scheduler.name", "unknown scheduler '" + name + "'"));
  SpecErrors errors;
  json options =
      resolve_args(type->second.options, scheduler.value("options", json::object()), "scheduler.options", errors);
  if (!errors.empty()) return answer_change(refusal(command, errors));
  const std::string asked = name;  // what the request names, where `name` becomes per_core for one core's switch
  if (scheduler.contains("core")) {
    auto [field, why] = switch_one_core(scheduler["core"], name, options);
    if (!why.empty()) return answer_change(change_refusal(command, field, why));
    type = scheduler_types().find(name);
  }
  std::unique_ptr<Scheduler> next = type->second.create(options);
  bool relayout = !switches_in_place(next->plan_workers(d_), d_.workers);
  for (const NfConfig& nf : d_.nfs) {
    if ((nf.external() && !type->second.external_nfs) || (nf.kernel_io && !type->second.kernel_io_nfs))
      return answer_change(change_refusal(command, "scheduler.name", name + " cannot schedule NF '" + nf.name + "'"));
  }
  Deployment trial = d_;
  trial.scheduler = {name, options};
  if (std::string need = unprepared_need(type->second, trial); !need.empty()) {
    // One core's switch: the module asked for, not per_core, is what needs it.
    if (asked != name) need.replace(0, name.size(), asked + " on core " + scheduler["core"].dump());
    return answer_change(
        change_refusal(command, "scheduler", need + ": serve with --ready-for " + ready_for_item(asked, scheduler)));
  }
  if (type->second.check) type->second.check(trial, errors);
  if (!errors.empty()) return answer_change(refusal(command, errors));

  if (!attached_)
    return answer_change(change_refusal(command, "scheduler", "an NF is restarting: switch once it is back"));
  if (relayout) {
    if (std::string why = why_no_relayout(); !why.empty())
      return answer_change(change_refusal(
          command, "scheduler.name",
          name + " lays the NFs out in other worker processes than " + d_.scheduler.name + ", and " + why));
    std::vector<WorkerPlan> plan = relayout_plan(*next);
    return start_relayout({.command = command,
                           .name = name,
                           .options = options,
                           .before = scheduler_entry(),
                           .next = std::move(next),
                           .plan = std::move(plan),
                           .requested_s = now_s,
                           .requested_tsc = rte_get_tsc_cycles(),
                           .ring_drops_before = ring_drops_each()});
  }
  uint64_t begin = rte_get_tsc_cycles();
  RingDrops drops_before = ring_drops_each();
  json before = scheduler_entry();
  // One core's switch keeps the other cores' modules as they are (take_over); otherwise the old module goes whole.
  bool taken_over = next->take_over(*scheduler_, *view_);
  if (!taken_over) {
    scheduler_->detach(*view_);
    neutral_hints();  // what the old module asked of the workers and entries does not outlive it
  }
  scheduler_ = std::move(next);
  d_.scheduler = {name, options};
  if (!taken_over) scheduler_->attach(*view_);
  scheduler_switched_ = true;
  json answer = {{"event", "change"},
                 {"id", command.value("id", json())},
                 {"op", "set_scheduler"},
                 {"state", "applied"},
                 {"scheduler", name},
                 {"options", options},
                 {"before", before},
                 {"t_requested", now_s},
                 {"t_done", now_s},
                 {"switch_us", static_cast<double>(rte_get_tsc_cycles() - begin) / hz_ * 1e6},
                 {"ring_drops_during", ring_drops_since(drops_before)},
                 {"ring_drops_by_ring", ring_drops_by_ring_since(drops_before)}};
  if (scheduler.contains("core")) answer["core"] = scheduler["core"];
  answer_applied(std::move(answer), begin);
}

std::pair<std::string, std::string> Run::switch_one_core(const json& core, std::string& name, json& options) const {
  std::set<int> cores = nf_cores(d_);
  if (!core.is_number_integer() || core.get<long long>() < 0 || core.get<long long>() > kMaxCoreNumber ||
      !cores.count(core.get<int>()))
    return {"scheduler.core", "must be one of the service's NF cores (" + core_list(cores) + "), got " + core.dump()};
  if (d_.scheduler.name == "auto")
    return {"scheduler.core", "auto decides for every core: switch the whole service from it first"};
  std::string why;
  SchedulerConfig next = with_core_switched(d_, core.get<int>(), {name, options}, why);
  if (!why.empty()) return {"scheduler", why};
  name = next.name;
  options = next.options;
  return {"", ""};
}

std::string Run::unprepared_need(const SchedulerType& type, const Deployment& trial) const {
  json needs = scheduler_requirements(type, trial).to_json();
  for (const auto& [resource, value] : needs.items())
    if (!provided_requirements_.contains(resource) || provided_requirements_[resource] != value)
      return trial.scheduler.name + " needs " + resource + " (" + value.dump() + "), which this run did not prepare";
  return "";
}

Run::NfPlace Run::place_of_nf(int nf) const {
  for (const WorkerPlan& plan : d_.workers)
    for (const Segment& segment : plan.segments)
      for (int member : segment.nfs)
        if (member == nf) return {plan.index, segment.nfs.front()};
  throw std::logic_error("NF " + d_.nfs[nf].name + " is in no worker's plan");
}

}  // namespace tandem
