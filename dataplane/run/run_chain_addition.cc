// A chain added to a running service: checked whole against the running deployment, its rings made and its NF
// processes started one by one while the other chains' traffic flows; once every one is attached, it joins the run
// in one step (the scheduler module re-attached with it, the generator's stream opened, the sink taking its exit).
// Until then nothing of the run refers to it, so a chain whose NF fails to start leaves no trace.
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <fstream>
#include <set>

#include <rte_cycles.h>
#include <rte_errno.h>

#include "catalog/catalog.h"
#include "contract/eal_args.h"
#include "contract/idle_wait.h"
#include "contract/run_timing.h"
#include "run.h"
#include "schedulers/mechanisms/machine_resources.h"
#include "worker_launcher.h"

namespace tandem {

namespace {

json refused(const json& command, const std::string& field, const std::string& message) {
  return addition_refusal(command, "chain", field, message);
}

// The first NF of `next`'s last chain (the one to add) whose name an NF of the service has, a removed chain's too:
// its field, by its place in the request (its index counts on from the service's NFs), and why; empty when every
// name is new.
std::pair<std::string, std::string> nf_name_taken(const Deployment& running, const Deployment& next,
                                                  const std::vector<bool>& chain_removed) {
  for (size_t nf = running.nfs.size(); nf < next.nfs.size(); nf++) {
    const std::string& name = next.nfs[nf].name;
    auto taken =
        std::find_if(running.nfs.begin(), running.nfs.end(), [&](const NfConfig& other) { return other.name == name; });
    if (taken == running.nfs.end()) continue;
    return {"chain.nfs[" + std::to_string(nf - running.nfs.size()) + "].name",
            "an NF named '" + name + "' is in the service (chain '" + running.chains[taken->chain].name + "'" +
                (chain_removed[taken->chain] ? ", removed: its NFs' names stay taken" : "") + ")"};
  }
  return {"", ""};
}

}  // namespace

std::string Run::why_no_chain_can_come() const {
  if (!d_.service) return "only a service (./tandem serve) takes new chains: its packet pool has room for them";
  if (addition_) return "a chain is being added: add the next once it is answered";
  if (relayout_) return "the NFs are being laid out for another scheduler: add the chain once it is answered";
  if (!removals_.empty()) return "a chain is being removed: add one once it is gone";
  if (restart_pending() || !attached_) return "an NF is restarting: add the chain once it is back";
  if (!probes_.empty()) return "a profiling run takes no new chains";
  return "";
}

// Why the chain `next` ends with cannot run beside the others ("" if it can), and the field that says so.
std::pair<std::string, std::string> Run::why_chain_cannot_come(Deployment& next) const {
  const ChainConfig& chain = next.chains.back();
  // Ports open at the start: a chain added live may use the service's own, no other (append_chain checks). Where
  // another chain takes from its port too, each must say which sources it takes (the port's Rx stage gives a frame
  // to the first chain that takes it: one taking every frame would starve the other).
  if (chain.from_port >= 0)
    for (const ChainConfig& other : d_.chains)
      if (other.from_port == chain.from_port && (other.from_sources.empty() || chain.from_sources.empty()))
        return {"chain.from", "port '" + d_.ports[chain.from_port].name + "' also feeds " + other.name +
                                  ": give each chain the source prefixes it takes (from: {port: NAME, source: "
                                  "[198.18.1.0/24]})"};
  if (chain.io.enabled) {
    if (!scheduler_types().at(d_.scheduler.name).kernel_io_nfs)
      return {"chain.io", d_.scheduler.name + " cannot schedule kernel-I/O NFs (scc and the kernel's policies can)"};
    // Its namespaces and veths are the control plane's to make before the request (launch/live_links.py).
    for (int n : chain.nfs)
      if (next.nfs[n].kernel_io && next.nfs[n].netns.empty())
        return {"chain.io", "NF " + next.nfs[n].name + " has no network namespace: the service makes them"};
  }
  std::set<int> cores = nf_cores(d_);
  for (int n : chain.nfs) {
    const NfConfig& nf = next.nfs[n];
    if (nf.external() && !scheduler_types().at(d_.scheduler.name).external_nfs)
      return {nf.spec_path + ".type", d_.scheduler.name + " cannot schedule an external NF's application"};
    if (!cores.count(nf.core))
      return {nf.spec_path + ".core", "core " + std::to_string(nf.core) +
                                          " is not one of the service's NF cores, which the machine was prepared for"};
  }
  SpecErrors errors = check_deployment(next, chain_removed_);
  if (!errors.empty()) return {errors.front().path, errors.front().message};
  const SchedulerType& type = scheduler_types().at(d_.scheduler.name);
  if (scheduler_requirements(type, d_).needs(MachineResource::CycleCosts))
    for (int n : chain.nfs)
      if (!(next.nfs[n].cost_cycles > 0))
        return {next.nfs[n].spec_path + ".cost_cycles",
                d_.scheduler.name +
                    " needs each NF's cost in cycles per packet, and neither a running NF of its type and "
                    "arguments nor the profiler's cache gives it: give cost_cycles, or profile a spec with it "
                    "before the service starts (./tandem profile SPEC keeps what it measures)"};
  next.workers = in_running_order(scheduler_->plan_workers(next), d_.workers);
  // Its processes take lcore ids that a removed chain's gave back, not one a killed process may have died inside
  // the mempool cache of.
  std::vector<bool> killed;
  for (const WorkerState& worker : workers_) killed.push_back(worker.hung);
  // Its applications' ids come from the top (launch_external: two each).
  auto applications = std::count_if(next.workers.begin() + static_cast<long>(d_.workers.size()), next.workers.end(),
                                    [](const WorkerPlan& plan) { return plan.runtime == Runtime::External; });
  if (!give_lcore_ids(next, d_.workers.size(), chain_removed_, killed,
                      next_external_lcore_ - 2 * static_cast<int>(applications)))
    return {"chain", "its NFs would run in more processes than DPDK has lcore ids for beside the running ones (" +
                         std::to_string(RTE_MAX_LCORE) +
                         " in all, the manager's and applications' among them): "
                         "remove a chain first"};
  for (size_t w = d_.workers.size(); w < next.workers.size(); w++)
    if (next.workers[w].runtime == Runtime::UserLevelThreads)
      return {"chain", "its NFs would run as " + std::string(runtime_name(next.workers[w].runtime)) +
                           ", which joins a run only at its start: restart the service with it"};
  std::vector<WorkerPlan> running(
      next.workers.begin(), next.workers.begin() + static_cast<long>(std::min(next.workers.size(), d_.workers.size())));
  if (!same_layout(running, d_.workers))
    return {"chain", d_.scheduler.name + " would lay the running NFs out in other processes with this chain (" +
                         d_.scheduler.name + " runs a core's NFs in one): restart the service with it"};
  // What the chains need with it, the spare room (which `next` would count once more) left out.
  unsigned needed = mbuf_pool_size(next, chain_removed_, ports_removed_) - kServiceSpareMbufs;
  if (needed > pool_->size)
    return {"chain", "the service's packet pool (" + std::to_string(pool_->size) +
                         " mbufs) has no room for its rings (" + std::to_string(needed) +
                         " needed): lower its ring_capacity, or restart with it"};
  return {"", ""};
}

void Run::add_chain(const json& command, double now_s) {
  if (std::string why = why_no_chain_can_come(); !why.empty()) return answer_change(refused(command, "request", why));
  if (!command.contains("chain") || !command["chain"].is_object())
    return answer_change(refused(command, "chain", "the chain is missing"));
  Deployment next = d_;
  try {
    append_chain(next, command["chain"]);
  } catch (const std::exception& e) {
    return answer_change(refused(command, "chain", beyond_stats_zone(next, chain_removed_).value_or(e.what())));
  }
  for (const ChainConfig& chain : d_.chains)
    if (chain.name == next.chains.back().name)
      return answer_change(refused(command, "chain.name",
                                   "a chain named '" + chain.name + "' is in the service" +
                                       (chain_removed_[chain.index] ? " (removed; its name stays taken)" : "")));
  // NFs are found by name (status, results, an argument change, the autoscaler): one name, one NF, over the
  // service's life. The control plane checks the spec's names; those of chains added since are known here.
  if (auto [field, why] = nf_name_taken(d_, next, chain_removed_); !why.empty())
    return answer_change(refused(command, field, why));
  if (auto [field, why] = why_chain_cannot_come(next); !why.empty()) return answer_change(refused(command, field, why));
  // As many stamps are free as NFs may run at once (check_deployment saw it): never refused here.
  if (!give_hops(next, d_.nfs.size(), chain_removed_))
    return answer_change(refused(command, "chain", "no hop stamp is free for its NFs"));

  ChainAddition addition;
  addition.id = command.value("id", json());
  addition.first_worker = d_.workers.size();
  addition.requested_s = now_s;
  addition.requested_tsc = rte_get_tsc_cycles();
  addition.ring_drops_before = ring_drops_each();
  // Its indices' shared counters as at the start, all zero: a chain that failed to start may have used them.
  for (size_t n = d_.nfs.size(); n < next.nfs.size(); n++) {
    stats_->nfs[n] = {};
    stats_->nf_control[n] = {};
    stats_->scale[n] = {};
  }
  for (size_t r = d_.rings.size(); r < next.rings.size(); r++) stats_->rings[r] = {};
  // Its workers held from the start: once attached they sleep until the chain joins. A busy poller the module
  // does not know yet would take the NF core's turns from the running NFs (under a real-time policy, through the
  // kernel's fair server: 50 ms a second, and the rings overflowed meanwhile).
  for (size_t w = d_.workers.size(); w < next.workers.size(); w++) stats_->workers[w] = {.throttled = 1};
  stats_->chains[next.chains.back().index] = {};
  for (size_t r = d_.rings.size(); r < next.rings.size(); r++) {
    RingConfig& config = next.rings[r];
    // A chain refused before may have left its rings (give_up_addition): this one's rings take their indices.
    name_left_ring_apart(config);
    rte_ring* ring = make_ring(config);
    if (ring == nullptr) {
      for (rte_ring* made : addition.rings) rte_ring_free(made);
      return answer_change(
          refused(command, "chain", "cannot make ring " + config.name + ": " + rte_strerror(rte_errno)));
    }
    addition.rings.push_back(ring);
  }
  addition.chain_config = command["chain"];
  addition.next = std::move(next);
  json with_chain = original_;
  with_chain["chains"].push_back(addition.chain_config);
  // The new workers read their plan from it; the running ones read it again only to restart.
  std::ofstream(deployment_path()) << deployment_to_json(addition.next, with_chain).dump(2);
  addition_ = std::move(addition);
  follow_addition(now_s);
}

void Run::follow_addition(double now_s) {
  if (!addition_) return;
  ChainAddition& addition = *addition_;
  if (addition.giving_up) {
    finish_giving_up();
    return;
  }
  const Deployment& next = addition.next;
  size_t to_start = next.workers.size() - addition.first_worker;
  // One worker at a time, as at the start (run_lifecycle.cc start_workers): each once the one before attached.
  for (;;) {
    if (!addition.pids.empty()) {
      size_t w = addition.first_worker + addition.pids.size() - 1;
      if (auto status = reap_if_exited(addition.pids.back())) {
        addition.pids.back() = 0;
        const ExternalNf* external = addition.externals[addition.pids.size() - 1].get();
        return give_up_addition(
            "NF " + worker_nf_names(next, static_cast<int>(w)) + " failed to start: " + describe_exit(*status) + " (" +
            (external ? "it printed: " + external->log_tail() : "its message is in the manager log") + ")");
      }
      bool attached = false;
      try {
        attached = added_worker_attached(addition, addition.pids.size() - 1);
      } catch (const std::exception& e) {
        return give_up_addition("NF " + worker_nf_names(next, static_cast<int>(w)) + ": " + e.what());
      }
      if (!attached) {
        if (std::optional<std::string> late = addition.starting->late())
          return give_up_addition("NF " + worker_nf_names(next, static_cast<int>(w)) + " did not attach: " + *late);
        return;
      }
    }
    if (addition.pids.size() == to_start) {
      addition.started = true;  // no more naps of the loop for it
      break;
    }
    const WorkerPlan& plan = next.workers[addition.first_worker + addition.pids.size()];
    try {
      addition.pids.push_back(launch_added_worker(addition, plan));
      addition.starting.emplace(addition.pids.back());
    } catch (const std::exception& e) {  // its port or its application could not be made
      return give_up_addition("NF " + worker_nf_names(next, plan.index) + ": " + e.what());
    }
  }
  if (restart_pending()) return;  // the module is away for a restart: the chain joins once it is back
  join_added_chain(now_s);
}

pid_t Run::launch_added_worker(ChainAddition& addition, const WorkerPlan& plan) {
  addition.externals.emplace_back();
  if (plan.runtime != Runtime::External) {
    // Its start (EAL's, its NFs' construction) on the control core, as an application's: on its NF core, below the
    // running NFs' real-time pollers, it would get that CPU only through the kernel's fair server, which takes the
    // core from them for as long as it runs it. Once attached it sleeps, and moves there (added_worker_attached).
    WorkerPlan starting = plan;
    starting.core = d_.control_core;
    return launch_tandem_worker(addition.next, starting, deployment_path(), {.beside_traffic = true});
  }
  create_pools_for_external_apps();  // a service without external NFs made none
  const Segment& segment = plan.segments.front();
  // A new chain's rings are all new: made with the request, they join the run's with the chain.
  auto ring = [&](int index) { return addition.rings.at(static_cast<size_t>(index) - d_.rings.size()); };
  addition.externals.back() = std::make_unique<ExternalNf>(d_, addition.next.nfs[segment.nfs.front()], plan,
                                                           ring(segment.in_rings.at(0)), ring(segment.out_rings.at(0)));
  // Its forwarding lcore starts on the control core, and moves to its NF core once stopped (move_to_its_core).
  return launch_external(*addition.externals.back(), true);
}

bool Run::added_worker_attached(ChainAddition& addition, size_t k) {
  WorkerControl& control = stats_->workers[addition.first_worker + k];
  ExternalNf* external = addition.externals[k].get();
  if (external == nullptr) {
    // Attached, and asleep until its chain joins (the few steps between would run below the pollers too): its poll
    // loop's thread goes to its NF core now.
    if (flag_load(control.ready) == 0 || sample_os_counters(addition.pids[k]).state != 'S') return false;
    give_normal_policy(addition.pids[k]);  // it started under SCHED_IDLE (launch_worker)
    if (std::string error = pin_to_core(addition.pids[k], addition.next.workers[addition.first_worker + k].core);
        !error.empty())
      throw std::runtime_error("cannot move it to its core: " + error);
    return true;
  }
  if (flag_load(control.ready) != 0) return true;
  if (external->forwarding_thread() == 0) return false;
  // An application knows no hold: until its chain joins it would busy-poll its empty ring beside the running NFs,
  // taking their core's turns (a module that does not know it yet cannot switch it). It waits stopped, on its core.
  kill(addition.pids[k], SIGSTOP);
  external->move_to_its_core();
  flag_store(control.ready, 1u);
  return true;
}

void Run::give_up_addition(const std::string& why) {
  ChainAddition& addition = *addition_;
  if (addition.giving_up) return;
  addition.giving_up = why;
  addition.give_up_deadline_tsc = rte_get_tsc_cycles() + static_cast<uint64_t>(hz_ * kStopSeconds);
  // Attached ones leave their loops as a removed chain's do, on the control core: on their NF core, below the
  // running NFs' real-time pollers, a process of the normal policy gets the CPU only through the kernel's fair server
  // (a second refused chain's firewall took 0.8 s to exit there). One still starting is killed (it may then hold
  // DPDK's shared memory lock: the EAL is not cleaned up at the end, as after any killed worker). None is waited for
  // here: the loop, and the running chains' traffic, go on while they exit (finish_giving_up).
  for (size_t k = 0; k < addition.pids.size(); k++) {
    if (addition.pids[k] <= 0) continue;
    WorkerControl& control = stats_->workers[addition.first_worker + k];
    if (flag_load(control.ready) == 0) {
      kill(addition.pids[k], SIGKILL);
      killed_workers_ = true;
    } else if (addition.externals[k]) {  // stopped, forwarding nothing: asked to exit as at a run's end
      if (pid_t thread = addition.externals[k]->thread(); thread > 0) confine_to_control_core(d_.control_core, thread);
      addition.externals[k]->request_stop();
      kill(addition.pids[k], SIGCONT);
    } else {
      confine_to_control_core(d_.control_core, addition.pids[k]);
    }
    flag_store(control.leave, 1u);
    idle_wake(control);
  }
  finish_giving_up();
}

bool Run::finish_giving_up() {
  ChainAddition& addition = *addition_;
  bool all_gone = true;
  for (pid_t& pid : addition.pids) {
    if (pid <= 0) continue;
    if (reap_if_exited(pid)) {
      pid = 0;
    } else if (rte_get_tsc_cycles() > addition.give_up_deadline_tsc) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);  // killed: gone at once
      pid = 0;
      killed_workers_ = true;
    } else {
      all_gone = false;
    }
  }
  if (!all_gone) return false;
  // An application's port stays (a port is not taken back from DPDK's shared ethdev data here): so do its rings.
  bool ports_made = std::any_of(addition.externals.begin(), addition.externals.end(),
                                [](const std::unique_ptr<ExternalNf>& external) { return external != nullptr; });
  if (!killed_workers_ && !ports_made)
    for (rte_ring* ring : addition.rings) rte_ring_free(ring);
  write_deployment();
  json command = {{"id", addition.id}, {"op", "add_chain"}, {"chain", addition.chain_config}};
  std::string why = *addition.giving_up;
  addition_.reset();
  answer_change(refused(command, "chain", why + "; the chain was not added"));
  return true;
}

void Run::join_added_chain(double now_s) {
  ChainAddition& addition = *addition_;
  Deployment& next = addition.next;
  uint64_t begin = rte_get_tsc_cycles();
  // The module goes and comes back with the new workers: its state is sized by the workers it attached to.
  detach_scheduler();
  for (size_t w = addition.first_worker; w < next.workers.size(); w++) view_->hints.release(w);
  size_t first_nf = d_.nfs.size(), first_worker = d_.workers.size();
  // Capacity for every index the stats zone has was reserved at the start: what refers to an element (the
  // generator's streams, the sink's paths) stays valid.
  d_.nfs.insert(d_.nfs.end(), next.nfs.begin() + static_cast<long>(first_nf), next.nfs.end());
  d_.rings.insert(d_.rings.end(), next.rings.begin() + static_cast<long>(d_.rings.size()), next.rings.end());
  d_.workers.insert(d_.workers.end(), next.workers.begin() + static_cast<long>(first_worker), next.workers.end());
  d_.chains.push_back(next.chains.back());
  original_["chains"].push_back(addition.chain_config);
  const ChainConfig& chain = d_.chains.back();
  rings_.insert(rings_.end(), addition.rings.begin(), addition.rings.end());
  std::string names;
  json workers = json::array();
  for (size_t k = 0; k < addition.pids.size(); k++) {
    size_t w = first_worker + k;
    pids_.push_back(addition.pids[k]);
    // What schedulers switch and /proc is read for: an application's forwarding thread, let go from its stop.
    task_ids_.push_back(addition.externals[k] ? addition.externals[k]->thread() : addition.pids[k]);
    if (addition.externals[k]) kill(addition.pids[k], SIGCONT);
    workers_.push_back({.pid = addition.pids[k]});
    externals_.push_back(std::move(addition.externals[k]));
    names += (names.empty() ? "" : ",") + nf_names_of(static_cast<int>(w));
    workers.push_back(worker_entry(w));
  }
  lost_at_crash_.resize(d_.nfs.size(), 0);
  args_generation_.resize(d_.nfs.size(), 0);
  chain_removed_.push_back(false);
  autoscaler_->add_chain(chain.index);  // its scaled NFs on their first instance, the others parked (as at a start)
  // The measurement window began before it: its counters there were zero, its processes' CPU counted from now.
  if (window_begun_ && !window_ended_) {
    window_begin_.generated.push_back(0);
    window_begin_.delivered.push_back(0);
    window_begin_.delivered_bytes.push_back(0);
    window_begin_.wasted.push_back(0);
    window_begin_.entry_backpressure.push_back(0);
    window_begin_.fell_behind.push_back(0);
    window_begin_.nfs.resize(d_.nfs.size());
    for (size_t w = first_worker; w < d_.workers.size(); w++)
      window_begin_.os.push_back(sample_os_counters(task_ids_[w]));
  }
  auto [entry, exit] = chain_ends_->open_added_chain(d_, chain, rings_, *stats_);
  sink_->add_chain(chain, std::move(exit), chain_ends_->port(chain.to_port));
  generator_->open_chain(chain, std::move(entry), *stats_, rte_get_tsc_cycles());
  // Its stream is open before its port's frames come: the Rx stage hands them to the stream of their chain.
  if (chain.from_port >= 0)
    generator_->take_from_port(*chain_ends_->port(chain.from_port), chain_ends_->route_of(chain),
                               chain_ends_->receiver_for_added(chain));
  if (!released_for_drain_) reattach_scheduler();
  answer_applied({{"event", "change"},
                  {"id", addition.id},
                  {"op", "add_chain"},
                  {"chain", chain.name},
                  {"state", "applied"},
                  {"nfs_started", names},
                  {"workers", workers},
                  {"t_requested", addition.requested_s},
                  {"t_done", now_s},
                  {"start_ms", (now_s - addition.requested_s) * 1e3},
                  {"join_us", static_cast<double>(rte_get_tsc_cycles() - begin) / hz_ * 1e6},
                  {"ring_drops_during", ring_drops_since(addition.ring_drops_before)},
                  {"ring_drops_by_ring", ring_drops_by_ring_since(addition.ring_drops_before)}},
                 addition.requested_tsc);
  addition_.reset();
}

void Run::refuse_unfinished_addition() {
  if (!addition_) return;
  give_up_addition("the run ended before its NFs had started");
  while (addition_ && !finish_giving_up()) usleep(1000);  // the traffic has ended: nothing waits behind this
}

}  // namespace tandem
