// A service's NFs re-laid out in other worker processes, live: the scheduler switched to one that runs them otherwise
// (coop's process per NF, rtc's one per core, Bubble's user-level threads). The new processes start beside the old
// ones (run_relayout_staging.cc); then the entries are held (the generator makes nothing, the ports' frames wait in
// their queues), the NFs drain what is inside to the sink, the old processes leave and the new ones go on on the
// same rings and counters, and the entries are let go: nothing is lost, the traffic pauses for the drain and the
// hand-over. An unmodified application (testpmd) keeps its process: the new workers start around it. Refused with
// nothing changed when the NFs do not drain in time or a new process does not start.
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <map>
#include <optional>

#include <rte_cycles.h>

#include "contract/eal_args.h"
#include "contract/idle_wait.h"
#include "contract/nf_report_file.h"
#include "contract/run_timing.h"
#include "run.h"
#include "worker_launcher.h"

namespace tandem {

namespace {

// How long the NFs may take to drain once the entries are held (a full ring of the costliest NF takes < 0.5 s), and
// the old processes to leave their loops once told.
constexpr double kRelayoutDrainSeconds = 3.0;
constexpr double kRelayoutLeaveSeconds = 5.0;
// How long the running module drains the NFs before the kernel's scheduler takes over (a drain under a module that
// schedules them takes ~10-20 ms here).
constexpr double kRelayoutModuleDrainSeconds = 0.1;

}  // namespace

std::string Run::why_no_relayout() const {
  if (addition_) return "a chain is being added: switch once it is answered";
  if (!removals_.empty()) return "a chain is being removed: switch once it is gone";
  if (restart_pending()) return "an NF is restarting: switch once it is back";
  if (port_work_) return "a port is being opened or closed: switch once it is answered";
  if (!pending_changes_.empty() || !pending_scales_.empty())
    return "a change of arguments or instances is being applied: switch once it is answered";
  if (!autoscaler_->settled()) return "a scaled NF's instance count is being changed: switch once it took effect";
  if (!probes_.empty()) return "a profiling run keeps its workers";
  if (released_for_drain_) return "the service is draining";
  for (const NfConfig& nf : d_.nfs) {
    if (chain_removed_[nf.chain]) continue;
    // Its process is not Tandem's to start again on the rings: a kernel-I/O NF keeps its sockets, whose contents no
    // counter tells. (An unmodified application keeps its process and its rings: only the workers around it are
    // replaced. A scaled NF's instances are started again as any NF, its egresses reading the count once started.)
    if (nf.kernel_io) return "NF '" + nf.name + "' does its I/O through kernel sockets";
  }
  return "";
}

std::vector<WorkerPlan> Run::relayout_plan(const Scheduler& next, const Deployment& d) const {
  return without_removed_chains(next.plan_workers(d), d);
}

std::vector<WorkerPlan> Run::without_removed_chains(const std::vector<WorkerPlan>& planned, const Deployment& d) const {
  std::vector<WorkerPlan> plan;
  for (WorkerPlan worker : planned) {
    std::erase_if(worker.segments,
                  [&](const Segment& segment) { return chain_removed_[d_.nfs[segment.nfs.front()].chain]; });
    if (worker.segments.empty()) continue;
    worker.index = static_cast<int>(plan.size());
    worker.lcore_id = worker.index + 1;  // lcore 0 is the manager's
    plan.push_back(std::move(worker));
  }
  return plan;
}

void Run::relayout_for_module(double now_s) {
  if (std::string why = why_no_relayout(); !why.empty()) return scheduler_->relayout_refused(why);
  // The workers it will plan, where it can tell before the drain: started beside the running ones meanwhile.
  std::optional<std::vector<WorkerPlan>> ahead = scheduler_->planned_relayout(d_);
  start_relayout({.command = {{"op", "set_scheduler"}, {"id", nullptr}, {"by", d_.scheduler.name}},
                  .name = d_.scheduler.name,
                  .options = d_.scheduler.options,
                  .before = scheduler_entry(),
                  .next = nullptr,
                  .plan = ahead ? without_removed_chains(*ahead, d_) : std::vector<WorkerPlan>{},
                  .requested_s = now_s,
                  .requested_tsc = rte_get_tsc_cycles(),
                  .ring_drops_before = ring_drops_each()});
}

void Run::end_relayout_unchanged(const std::string& why) {
  dismiss_staged(*relayout_);
  Relayout relayout = std::move(*relayout_);
  relayout_.reset();
  generator_->release(rte_get_tsc_cycles());
  if (relayout.next) {
    if (!attached_) reattach_scheduler();  // the module before, fresh: nothing changed
    return answer_change(change_refusal(relayout.command, relayout.field, why));
  }
  // The module that asked, as it was (its decisions kept), told why.
  scheduler_->relayout_refused(why);
  if (attached_) return;
  scheduler_->attach(*view_);
  attached_ = true;
  scheduler_switched_ = true;
}

void Run::start_relayout(Relayout relayout) {
  if (relayout.plan.size() > static_cast<size_t>(kMaxWorkers)) {
    return answer_change(change_refusal(relayout.command, "scheduler.name",
                                        relayout.name + " would run " + std::to_string(relayout.plan.size()) +
                                            " workers, more than a run has room for (" + std::to_string(kMaxWorkers) +
                                            ")"));
  }
  relayout_ = std::move(relayout);
  if (may_stage(*relayout_)) return start_staging();
  hold_entries_for_relayout();
  follow_relayout(relayout_->held_s);
}

void Run::follow_relayout(double now_s) {
  if (!relayout_) {
    if (attached_ && scheduler_->wants_relayout()) relayout_for_module(now_s);
    return;
  }
  if (relayout_->staging) return follow_staging();
  std::optional<size_t> holder = worker_holding_packets();
  bool rings_empty = true;
  for (const ChainConfig& chain : d_.chains)
    if (!chain_removed_[chain.index])
      for (int ring : chain.rings) rings_empty = rings_empty && rte_ring_count(rings_[ring]) == 0;
  if (rings_empty && !holder) {
    if (drain_settled()) return replace_workers();
  } else {
    relayout_->quiet.reset();
  }
  // The module lets go where it would not finish the drain: a module that parks a worker by its rings' occupancy
  // never gives a parked batch its turn once the rings are empty, and one that never switches (a real-time poller
  // of the kernel's policies) never gives the NFs after the first theirs; the kernel's scheduler drains the rest.
  if (attached_ &&
      ((rings_empty && scheduler_->holds(*holder)) || now_s - relayout_->held_s >= kRelayoutModuleDrainSeconds)) {
    detach_scheduler();
    neutral_hints();
  }
  if (now_s - relayout_->held_s < kRelayoutDrainSeconds) return;
  end_relayout_unchanged("the NFs did not drain within " + std::to_string(static_cast<int>(kRelayoutDrainSeconds)) +
                         " s of the entries' hold; nothing was changed");
}

bool Run::drain_settled() {
  // Rings empty and no NF holding a packet, as the counters say, may be a worker stopped between its dequeue and the
  // count of it (a module preempts a worker anywhere: UNiS did so in most switches away from it). Every worker runs
  // under the kernel's scheduler from here, and the drain is settled once each finished a loop's turn since the look
  // and no packet moved meanwhile: a batch in hand at the look would have been handed on, and counted, by then.
  if (attached_) {
    detach_scheduler();
    neutral_hints();
  }
  mirror_external_counters();  // an application's ring operations, as its port counted them until now
  uint64_t moved = 0;
  for (const ChainConfig& chain : d_.chains)
    for (int ring : chain.rings)
      moved += counter_read(stats_->rings[ring].enqueued) + counter_read(stats_->rings[ring].dequeued) +
               counter_read(stats_->rings[ring].dropped_full);
  for (const NfConfig& nf : d_.nfs) moved += counter_read(stats_->nfs[nf.index].packets_dropped);
  std::vector<uint64_t> turns;
  for (size_t w = 0; w < d_.workers.size(); w++)
    turns.push_back(workers_[w].exited ? 0 : counter_read(stats_->workers[w].heartbeat));
  if (!relayout_->quiet || relayout_->quiet->moved != moved) {
    relayout_->quiet = Relayout::Quiet{moved, turns};
    return false;
  }
  // A worker asleep on its futex went to sleep at its loop's top, with no batch in hand (a spare that owns no NF).
  // An application keeps no loop count: its port's counters (in `moved`) say it forwarded nothing since the look,
  // and it keeps running through the switch, so what it might still hand on reaches the next layout's workers.
  for (size_t w = 0; w < turns.size(); w++)
    if (!workers_[w].exited && !externals_[w] && turns[w] == relayout_->quiet->turns[w] &&
        !idle_sleeping(stats_->workers[w]))
      return false;
  return true;
}

void Run::count_passages_past_inner_rings() {
  for (const WorkerPlan& plan : d_.workers)
    for (const Segment& segment : plan.segments)
      for (size_t k = 0; k + 1 < segment.nfs.size(); k++) {
        int nf = segment.nfs[k];
        // What NF k took and neither dropped nor lost at a crash, it passed on: with the segment drained, through
        // the ring to the next NF, as if it had been enqueued there and dequeued at once.
        int64_t passed = held_by_segment(segment_of(d_.nfs, {nf})) - static_cast<int64_t>(lost_at_crash_[nf]);
        if (passed <= 0) continue;
        RingCounters& ring = stats_->rings[d_.nfs[nf].out_rings.at(0)];
        counter_add(ring.enqueued, static_cast<uint64_t>(passed));
        counter_add(ring.dequeued, static_cast<uint64_t>(passed));
      }
}

void Run::retire_workers() {
  // The module lets go (everything it did to the machine undone), so that every old process runs to see `leave`; its
  // cgroups too, before the processes leave (the kernel moves no exiting thread: see follow_removals). The traffic
  // is held meanwhile.
  detach_scheduler();
  neutral_hints();
  cgroup_work_->drain();
  // The old processes leave their loops at a batch's end, on the control core (on their NF core a process of the
  // normal policy may wait for the kernel's fair server), write their reports and exit.
  for (size_t w = 0; w < d_.workers.size(); w++) {
    if (workers_[w].exited || externals_[w]) continue;  // an application stays (launch_planned_workers)
    workers_[w].removed = true;                         // its exit is the point, not a crash
    confine_to_control_core(d_.control_core, pids_[w]);
    flag_store(stats_->workers[w].leave, 1u);
    idle_wake(stats_->workers[w]);
  }
  uint64_t deadline = rte_get_tsc_cycles() + static_cast<uint64_t>(hz_ * kRelayoutLeaveSeconds);
  for (;;) {
    bool all_gone = true;
    for (size_t w = 0; w < d_.workers.size(); w++) all_gone = (externals_[w] || reap(w)) && all_gone;
    if (all_gone) break;
    say_still_waiting("the old workers leaving", deadline - static_cast<uint64_t>(hz_ * kRelayoutLeaveSeconds));
    if (rte_get_tsc_cycles() > deadline) {
      for (size_t w = 0; w < d_.workers.size(); w++) {
        if (workers_[w].exited || externals_[w]) continue;
        kill(pids_[w], SIGKILL);
        waitpid(pids_[w], nullptr, 0);
        workers_[w].exited = true;
        forget(w);
        killed_workers_ = true;
        warnings_.push_back("NF " + nf_names_of(static_cast<int>(w)) + " did not leave its loop within " +
                            std::to_string(static_cast<int>(kRelayoutLeaveSeconds)) +
                            " s of the scheduler switch and was killed");
      }
      break;
    }
    usleep(1000);
  }
  // What their NFs counted themselves is kept as those NFs' earlier reports: the next processes count afresh.
  collect_nf_reports("re-layout", seconds_since_go(rte_get_tsc_cycles()));
}

void Run::collect_nf_reports(const std::string& ended, double at_s) {
  for (size_t w = 0; w < d_.workers.size(); w++) {
    const WorkerPlan& plan = d_.workers[w];
    for (size_t s = 0; s < plan.segments.size(); s++) {
      // A removed chain's NFs: nothing comes after. (A run that failed before its loop has no removals to tell.)
      size_t chain = static_cast<size_t>(d_.nfs[plan.segments[s].nfs.front()].chain);
      bool gone_for_good = chain < chain_removed_.size() && chain_removed_[chain];
      if (!nf_reports_.collect(nf_report_path(d_.paths.run_dir, static_cast<int>(w), s), gone_for_good ? "" : ended,
                               at_s))
        warnings_.push_back("worker " + plan.name + " wrote NF reports that cannot be read: the reports of " +
                            nf_names_of(static_cast<int>(w)) + " are missing from the results");
    }
  }
}

json Run::launch_planned_workers(std::map<int, Relayout::Staged>* staged) {
  // The applications that ran through the switch, by their NF: each goes on in the worker that plans it now, with
  // its restart records (the window its restarts count in, and what its dead processes held, which the run's end
  // splits by the pool: split_external_crash_losses).
  struct Kept {
    pid_t pid, task;
    WorkerState state;
    std::unique_ptr<ExternalNf> external;
    std::optional<RestartState> restarts;
  };
  std::map<int, Kept> kept;
  for (size_t w = 0; w < externals_.size(); w++)
    if (externals_[w] && !workers_[w].exited && !workers_[w].removed) {
      int nf = externals_[w]->nf().index;  // read before the move below (an assignment's right side goes first)
      auto restarts = restart_state_.find(w);
      kept[nf] = {pids_[w], task_ids_[w], workers_[w], std::move(externals_[w]),
                  restarts == restart_state_.end() ? std::nullopt : std::optional(restarts->second)};
    }
  pids_.clear();
  task_ids_.clear();  // the view's worker pids: the same vector, refilled
  workers_.clear();
  externals_.clear();
  restart_state_.clear();  // by worker index: the processes a Tandem NF's records counted are gone
  restart_refusals_.clear();
  for (size_t w = 0; w < d_.workers.size(); w++) stats_->workers[w] = {};
  // /proc's counters of two processes do not subtract: the window's are unavailable for the new ones.
  if (window_begun_ && !window_ended_) window_begin_.os.assign(d_.workers.size(), OsSample{});
  std::string deployment_path = write_deployment();
  if (staged) promote_staged(*staged);
  // One at a time, as at the start; a worker that fails to start fails the run (the old ones are gone), which then
  // ends and undoes everything as any failed run.
  json workers = json::array();
  for (const WorkerPlan& plan : d_.workers) {
    auto found = plan.runtime == Runtime::External ? kept.find(plan.segments.front().nfs.front()) : kept.end();
    auto promoted = staged ? staged->find(plan.index) : std::map<int, Relayout::Staged>::iterator();
    if (staged && promoted != staged->end()) {
      size_t w = pids_.size();
      pids_.push_back(promoted->second.pid);
      task_ids_.push_back(promoted->second.pid);
      workers_.push_back({.pid = promoted->second.pid});
      externals_.emplace_back();
      wait_until_attached(w, rte_get_tsc_cycles());  // in its own slot now
      stats_->workers[promoted->second.slot] = {};   // it left the spare one
      workers_[w].attach_ms = promoted->second.attach_ms;
      json entry = worker_entry(w);
      entry["staged"] = true;  // started beside the old processes: attach_ms before the hold
      workers.push_back(std::move(entry));
      continue;
    }
    if (found == kept.end()) {
      workers.push_back(worker_entry(launch_attached(plan, deployment_path)));
      continue;
    }
    size_t w = pids_.size();
    pids_.push_back(found->second.pid);
    task_ids_.push_back(found->second.task);
    workers_.push_back(found->second.state);
    externals_.push_back(std::move(found->second.external));
    if (found->second.restarts) restart_state_[w] = *found->second.restarts;
    flag_store(stats_->workers[w].ready, 1u);  // forwarding all along
    kept.erase(found);
    workers.push_back(worker_entry(w));
  }
  // Every running application's NF is in some plan (a removed chain's left before): one that is not would be
  // forgotten while it runs.
  if (!kept.empty())
    throw std::logic_error("the new layout has no worker for NF " + d_.nfs[kept.begin()->first].name +
                           "'s running application");
  return workers;
}

void Run::replace_workers() {
  uint64_t drained_tsc = rte_get_tsc_cycles();
  retire_workers();
  uint64_t left_tsc = rte_get_tsc_cycles();
  // Nothing runs now: the counters and rings are exact. The drain looked while the NFs ran, and a batch taken in
  // the instant between its look at a ring and at the NF's counters went on, at the NF's leaving, into the next
  // ring, which the next layout may pass by (rtc's segments): the same layout is started again and drains it.
  for (const ChainConfig& chain : d_.chains) {
    if (chain_removed_[chain.index]) continue;
    for (int ring : chain.rings) {
      if (rte_ring_count(rings_[ring]) == 0) continue;
      launch_planned_workers();
      if (relayout_->next) {
        reattach_scheduler();
      } else {
        scheduler_->attach(*view_);
        attached_ = true;
        scheduler_switched_ = true;
      }
      relayout_->restarts++;
      relayout_->quiet.reset();  // the look starts over with the processes started again
      return;
    }
  }
  Relayout relayout = std::move(*relayout_);
  relayout_.reset();
  count_passages_past_inner_rings();
  if (relayout.moved_nf >= 0) d_.nfs[relayout.moved_nf].core = relayout.moved_to;  // as the plan placed it
  if (relayout.next) {
    d_.scheduler = {relayout.name, relayout.options};
    scheduler_ = std::move(relayout.next);
  } else {  // the module's own: it plans the workers it now wants
    scheduler_->relayout_begins(d_);
    std::vector<WorkerPlan> planned = relayout_plan(*scheduler_);
    if (!same_layout(planned, relayout.plan)) dismiss_staged(relayout);  // not what it said before: started anew
    relayout.plan = std::move(planned);
  }
  d_.workers = std::move(relayout.plan);
  json workers = launch_planned_workers(&relayout.staged);
  autoscaler_->relaid_out();  // the new egresses spread flows over one instance until they read the count
  uint64_t started_tsc = rte_get_tsc_cycles();
  scheduler_->attach(*view_);
  attached_ = true;
  scheduler_switched_ = true;  // the control loop reads the new module's tick period
  generator_->release(rte_get_tsc_cycles());
  auto ms = [&](uint64_t from, uint64_t to) { return static_cast<double>(to - from) / hz_ * 1e3; };
  json answer = {{"event", "change"},
                 {"id", relayout.command.value("id", json())},
                 {"op", relayout.command.value("op", "set_scheduler")},
                 {"state", "applied"},
                 {"scheduler", relayout.name},
                 {"options", relayout.options},
                 {"before", relayout.before},
                 {"relayout", true},
                 {"by", relayout.command.value("by", json())},  // the module that asked for it (auto), or null
                 {"workers", workers},
                 {"t_requested", relayout.requested_s},
                 {"t_done", seconds_since_go(rte_get_tsc_cycles())},
                 {"staged_ms", ms(relayout.requested_tsc, relayout.held_tsc)},  // the new processes started
                 {"drain_ms", ms(relayout.held_tsc, drained_tsc)},
                 {"leave_ms", ms(drained_tsc, left_tsc)},
                 {"start_ms", ms(left_tsc, started_tsc)},
                 {"held_ms", ms(relayout.held_tsc, rte_get_tsc_cycles())},
                 {"drain_restarts", relayout.restarts},  // the old layout started again to finish the drain
                 {"ring_drops_during", ring_drops_since(relayout.ring_drops_before)},
                 {"ring_drops_while_held", ring_drops_since(relayout.ring_drops_at_hold)},
                 {"ring_drops_by_ring", ring_drops_by_ring_since(relayout.ring_drops_before)}};
  if (const json& asked = relayout.command.value("scheduler", json::object()); asked.contains("core"))
    answer["core"] = asked["core"];  // one core's switch
  if (relayout.moved_nf >= 0) {
    answer["nf"] = d_.nfs[relayout.moved_nf].name;
    answer["core"] = relayout.moved_to;
    answer["core_before"] = relayout.moved_from;
  }
  answer_applied(std::move(answer), relayout.requested_tsc);
}

void Run::refuse_unfinished_relayout() {
  if (relayout_) end_relayout_unchanged("the run ended while the NFs drained for the switch");
}

}  // namespace tandem
