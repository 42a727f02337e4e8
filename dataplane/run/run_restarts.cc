// Supervision with restarts: a worker whose NFs' policy allows it (`restart` in the spec) is started again under the
// same name after its process died, its rings and counters kept. What it held at the crash is counted lost, by the
// name of the segment's first NF; while it is down its input ring fills and drops, counted as any ring's. Restarts
// back off (0.1 s, doubling, at most 5 s) and give up, ending the run, after kMaxRestarts within kRestartWindow.
// An external application (testpmd) restarts too: what its dead process held is told from what it freed only at
// the run's end, by the pool (Run::split_external_crash_losses), so one external NF per run may have crashed.
#include <fstream>

#include <rte_cycles.h>

#include "contract/run_timing.h"
#include "run.h"
#include "worker_launcher.h"

namespace tandem {

namespace {
constexpr int kMaxRestarts = 5;
constexpr double kRestartWindowSeconds = 60.0;
constexpr double kFirstBackOffSeconds = 0.1, kMaxBackOffSeconds = 5.0;
constexpr const char* kRestartNever = "restart: never";
}  // namespace

std::string Run::why_not_restartable(size_t w) const {
  const WorkerPlan& plan = d_.workers[w];
  for (const Segment& segment : plan.segments)
    for (int nf : segment.nfs) {
      const NfConfig& config = d_.nfs[nf];
      if (config.restart == NfConfig::Restart::kNever) return std::string(kRestartNever);
      if (config.restart == NfConfig::Restart::kOnFailure && workers_[w].exit_description == "exited with status 0")
        return "it exited cleanly (restart: on-failure)";
    }
  // A poll loop, Bubble's user-level threads or a kernel-I/O NF: the same process started again takes its segments
  // where the counters, rings and veths are (what a dead socket held is counted lost with its receiver: see
  // forget_dead_receiver); an external application takes its port again, whose counters go on.
  if (plan.runtime == Runtime::External)
    for (const auto& [other, state] : restart_state_)
      if (other != w && externals_[other])
        return "external NF " + nf_names_of(static_cast<int>(other)) +
               " died earlier in this run, and what two applications held at their deaths cannot be told apart";
  return "";
}

void Run::neutral_hints() { view_->hints.neutral(d_.workers.size(), d_.chains.size()); }

bool Run::schedule_restart(size_t w, double now_s) {
  if (std::string why = why_not_restartable(w); !why.empty()) {
    // Its spec asked for a restart that cannot be: the run ends, saying why.
    if (why != kRestartNever) restart_refusals_[w] = why;
    return false;
  }
  std::string names = nf_names_of(static_cast<int>(w));
  RestartState& state = restart_state_[w];
  while (!state.times.empty() && state.times.front() < now_s - kRestartWindowSeconds)
    state.times.erase(state.times.begin());
  if (static_cast<int>(state.times.size()) >= kMaxRestarts) {
    fail("NF " + names + " " + workers_[w].exit_description + " at t=" + std::to_string(now_s).substr(0, 5) +
             " s, its " + std::to_string(kMaxRestarts + 1) + "th end within " +
             std::to_string(static_cast<int>(kRestartWindowSeconds)) + " s: not restarted again",
         names);
    return true;
  }
  // What the dead process held: the ring operations it did not live to count first, then every packet of its
  // segments taken from an input ring and not yet handed on, dropped or counted.
  const WorkerPlan& plan = d_.workers[w];
  // Its own ends only: the live process at a ring's other end may be in the middle of its own operation.
  bool cut_mid_operation = externals_[w] && externals_[w]->cut_mid_operation();
  for (const Segment& segment : plan.segments) {
    if (externals_[w]) break;
    cut_mid_operation |= counter_read(stats_->nfs[segment.nfs.front()].mbufs_being_freed) != 0;
    for (int ring : segment.in_rings) {
      cut_mid_operation |= rings_[ring]->cons.head != rings_[ring]->cons.tail;
      // A kernel link's receive buffers taken or handed on, their count not yet told (SocketIngress).
      cut_mid_operation |= d_.rings[ring].kernel && flag_load(stats_->rings[ring].receive_buffers_changing) != 0;
    }
    for (int ring : segment.out_rings) cut_mid_operation |= rings_[ring]->prod.head != rings_[ring]->prod.tail;
  }
  if (cut_mid_operation) {
    fail("NF " + names + " " + workers_[w].exit_description +
             " in the middle of a ring or pool operation, whose shared state it cut: not restarted",
         names);
    return true;
  }
  std::optional<uint64_t> unsent;  // an external application's: held at its death, or freed before it
  if (externals_[w]) {
    ring_counts_caught_up_ += externals_[w]->catch_up_counts();
    externals_[w]->mirror_counters(*stats_);
    unsent = externals_[w]->unsent_since_launch();
  } else {
    for (const Segment& segment : plan.segments) {
      for (int ring : segment.in_rings) catch_up_ring(ring, false);
      for (int ring : segment.out_rings) catch_up_ring(ring, true);
      int head = segment.nfs.front();
      int64_t held = held_by_segment(segment) - lost_in_segment(segment);
      lost_at_crash_[head] += static_cast<uint64_t>(std::max<int64_t>(held, 0));
      state.lost += static_cast<uint64_t>(std::max<int64_t>(held, 0));
      for (int nf : segment.nfs) nf_reports_.lost_at_crash(d_.nfs[nf].name, now_s);  // its counts died with it
      for (int link : segment.in_rings)
        if (d_.rings[link].kernel) forget_dead_receiver(link);
      for (int link : segment.out_rings)
        if (d_.rings[link].kernel) restarted_senders_[link] = {head, w};
    }
  }
  double back_off = kFirstBackOffSeconds * static_cast<double>(1u << std::min<size_t>(state.times.size(), 6));
  state.times.push_back(now_s);
  state.restart_at_s = now_s + std::min(back_off, kMaxBackOffSeconds);
  state.crashed_at_s = now_s;
  state.how = workers_[w].exit_description;
  // The module lets every worker go until the NF is back (the others run under the kernel's default policy
  // meanwhile): none of its signals, policies or cgroup moves may reach a pid that is no longer the NF's.
  if (attached_) {
    detach_scheduler();
    neutral_hints();
  }
  state.held_or_freed = unsent;
  emit(events_, {{"event", "crash"},
                 {"nfs", names},
                 {"worker", plan.name},
                 {"t", now_s},
                 {"how", state.how},
                 {"lost_so_far", unsent ? json() : json(state.lost)},
                 {"held_or_freed", unsent ? json(*unsent) : json()},
                 {"restart_in_s", state.restart_at_s - now_s}});
  return true;
}

void Run::forget_dead_receiver(int link) {
  RingCounters& counters = stats_->rings[link];
  ReceiverRestarts& restarts = restarted_receivers_[link];
  restarts.restarted = true;
  restarts.taken = counter_read(counters.dequeued);
  restarts.foreign = counter_read(counters.foreign);
  // Nobody else writes them: the dead process was their only writer, the next one is not started yet.
  dead_receive_buffers_ += counter_read(counters.receive_buffers);
  __atomic_store_n(&counters.receive_buffers, uint64_t{0}, __ATOMIC_RELAXED);
  __atomic_store_n(&counters.socket_arrived, uint64_t{0}, __ATOMIC_RELAXED);
  __atomic_store_n(&counters.socket_dropped, uint64_t{0}, __ATOMIC_RELAXED);
  __atomic_store_n(&counters.socket_counted, 0u, __ATOMIC_RELEASE);
}

const ReceiverRestarts& Run::receiver_restarts(int link) const {
  static const ReceiverRestarts kNone;
  auto found = restarted_receivers_.find(link);
  return found == restarted_receivers_.end() ? kNone : found->second;
}

void Run::settle_restarted_senders() {
  for (const auto& [link, sender] : restarted_senders_) {
    const auto& [nf, w] = sender;
    uint64_t uncounted = std::min(sends_not_counted(stats_->rings[link], receiver_restarts(link)), lost_at_crash_[nf]);
    if (uncounted == 0) continue;
    counter_add(stats_->rings[link].enqueued, uncounted);
    kernel_sends_caught_up_ += uncounted;
    lost_at_crash_[nf] -= uncounted;
    // The restarts told them lost at the crash: the last of the worker's that did says they were sent after all.
    for (auto restart = restarts_.rbegin(); restart != restarts_.rend() && uncounted > 0; ++restart) {
      if ((*restart)["worker"] != d_.workers[w].name || !(*restart)["lost_at_crash"].is_number()) continue;
      uint64_t told = (*restart)["lost_at_crash"].get<uint64_t>(), moved = std::min(told, uncounted);
      (*restart)["lost_at_crash"] = told - moved;
      (*restart)["sent_uncounted"] = moved;
      uncounted -= moved;
    }
  }
}

bool Run::restart_pending() const {
  for (const auto& [w, state] : restart_state_)
    if (state.restart_at_s >= 0) return true;
  return false;
}

void Run::relaunch_due(double now_s) {
  if (!error_.empty()) return;
  for (auto& [w, state] : restart_state_) {
    if (state.restart_at_s < 0 || now_s < state.restart_at_s) continue;
    state.restart_at_s = -1;
    uint64_t begin = rte_get_tsc_cycles();
    flag_store(stats_->workers[w].ready, 0u);
    flag_store(stats_->workers[w].left_loop, 0u);
    pid_t pid = externals_[w] ? externals_[w]->relaunch() : launch_tandem_worker(d_, d_.workers[w], deployment_path());
    pids_[w] = pid;
    task_ids_[w] = externals_[w] ? 0 : pid;  // an external NF's forwarding thread, once it forwards
    workers_[w] = WorkerState{.pid = pid};
    // /proc's counters of two processes do not subtract: the window's are unavailable for this worker.
    if (window_begun_) window_begin_.os[w] = OsSample{};
    wait_until_attached(w, begin);
    json restart = {{"nfs", nf_names_of(static_cast<int>(w))},
                    {"worker", d_.workers[w].name},
                    {"pid", pid},
                    {"crashed_at_s", state.crashed_at_s},
                    {"how", state.how},
                    {"restarted_at_s", now_s},
                    {"attach_ms", workers_[w].attach_ms},
                    {"lost_at_crash", state.held_or_freed ? json() : json(state.lost)}};
    // An application's: what it held at its death is told from what it freed before only at the run's end.
    if (state.held_or_freed) restart["held_or_freed"] = *state.held_or_freed;
    restarts_.push_back(restart);
    restart["event"] = "restart";
    emit(events_, restart);
    state.lost = 0;
  }
  if (may_reattach()) {
    // Every NF is back: what the module before decided goes to the results' restarts.
    if (!restarts_.empty()) restarts_.back()["scheduler_before"] = scheduler_->report(*view_);
    reattach_scheduler();
  }
}

void Run::reattach_scheduler() {
  // A fresh module: the state of the one before was of processes that are gone.
  scheduler_ = scheduler_types().at(d_.scheduler.name).create(d_.scheduler.options);
  scheduler_->attach(*view_);
  attached_ = true;
  scheduler_switched_ = true;  // the control loop reads its tick period again
}

}  // namespace tandem
