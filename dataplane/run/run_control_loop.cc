// The run's control loop, polled until the traffic and the drain are over or the run fails:
//   1. the probes' steps, or the generator's packets that are due; 2. the chains' exits drained into the sink;
//   3. the scheduler module's tick; 4. the measurement window opened and closed; 5. every 10 ms, the autoscaler's
//   decisions, a service's live changes, crashed workers reaped and, every 250 ms, hung ones looked for and progress
//   reported.
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>

#include <rte_cycles.h>

#include "contract/start_gate.h"
#include "idle_work_naps.h"
#include "run.h"

namespace tandem {

namespace {
// How long the loop naps for a live change's build: past it, a change still pending waits for an NF that runs no batch
// (no build meanwhile), or its build runs at nice 19 by then (live_args.cc), and the traffic need not pay for it.
constexpr double kBuildNapSeconds = 5.0;
}  // namespace

void Run::control_loop() {
  // After the workers attached: a port made now is the manager's alone (no secondary attaches it).
  chain_ends_ = std::make_unique<ChainEnds>(d_, pool_, rings_, *stats_);
  generator_ =
      std::make_unique<Generator>(d_, pool_, chain_ends_->take_entries(), *stats_, chain_ends_->take_receivers());
  sink_ = std::make_unique<Sink>(d_, chain_ends_->take_exits(), chain_ends_->exit_ports());
  for (const auto& [name, probe] : probes_) probes_drive_traffic_ |= probe->drives_traffic();
  probe_view_ = std::make_unique<ProbeView>(ProbeView{d_, *generator_, *sink_, *stats_, pids_, hz_});
  for (const auto& [name, probe] : probes_) probe->attach(*probe_view_);
  scheduler_->attach(*view_);
  attached_ = true;
  // The first module's cgroups are awaited: a run that cannot have them fails now, naming the file, as it would
  // without the queue (a later module's failures are warnings: the traffic runs by then).
  cgroup_work_->drain();
  if (cgroup_work_->has_failures()) {
    std::vector<std::string> failures = cgroup_work_->take_failures();
    throw std::runtime_error(d_.scheduler.name + ": " + failures.front());
  }
  open_commands(commands_fd_);
  autoscaler_ = std::make_unique<Autoscaler>(d_, *stats_, hz_);

  const auto cycles = [&](double seconds) { return static_cast<uint64_t>(seconds * hz_); };
  go_tsc_ = rte_get_tsc_cycles();
  generator_->start(go_tsc_);
  flag_store(stats_->go, 1u);
  wake_start_gate(*stats_);

  const uint64_t window_begin = go_tsc_ + cycles(d_.warmup_s);
  // A run without a duration (chains fed by ports) carries traffic until SIGINT or SIGTERM, then drains.
  const bool until_stopped = d_.duration_s == 0;
  uint64_t window_end = until_stopped ? UINT64_MAX : window_begin + cycles(d_.duration_s);
  uint64_t drain_end = until_stopped ? UINT64_MAX : window_end + cycles(d_.drain_s);
  const auto tick_period_of = [&](const Scheduler& scheduler) {
    return scheduler.tick_period_ns() ? cycles(static_cast<double>(scheduler.tick_period_ns()) * 1e-9) : 0;
  };
  uint64_t tick_period = tick_period_of(*scheduler_);
  const uint64_t housekeeping_period = cycles(0.01), progress_period = cycles(0.25);
  uint64_t next_tick = go_tsc_, next_housekeeping = go_tsc_, next_progress = go_tsc_ + progress_period;
  uint64_t last_progress_delivered = 0, last_progress_tsc = go_tsc_;
  const IdleWorkNaps naps(static_cast<double>(hz_));
  uint64_t next_nap = go_tsc_;
  // A nap below may be as short as 10 us (idle_work_naps.h): at the default timer slack of a task of the normal
  // policy (50 us) it would last several times longer.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

  for (;;) {
    uint64_t now = rte_get_tsc_cycles();
    reclaim_->set_quiet(quiet_for_reclaim());
    // 1. Traffic: the probes' steps, or the packets the generator has due (until the window ends).
    bool generating = now < window_end && !probe_finished();
    if (generating) {
      for (const auto& [name, probe] : probes_) probe->poll(*probe_view_, now);
      if (!probes_drive_traffic_) generator_->poll(now);
    }
    // 2. The chains' exits drained into the sink (and, in a service, what its live changes cost them).
    sink_->poll();
    watch_changes(now);
    // A re-layout's drain is looked at every turn, not every housekeeping (10 ms): the entries are held meanwhile.
    if (relayout_) follow_relayout(seconds_since_go(now));
    // 3. The scheduler module's tick.
    if (tick_period != 0 && now >= next_tick && attached_) {  // detached while a crashed NF is restarted
      scheduler_->tick(*view_, now);
      tick_period = tick_period_of(*scheduler_);  // auto's own switches, in place, change it
      next_tick += tick_period;
    }
    // A worker starting beside the traffic, or a live change's build (SCHED_IDLE, on this core), runs while the loop
    // naps, and gives the core back the moment the loop wakes. A module that may not go long without a tick (NFVnice
    // at overload) has the nap end at its next one (idle_work_naps.h); the generator makes each nap up at once (an
    // entry ring holds 2 ms of 1 Mpps).
    if (now >= next_nap && idle_work_beside_traffic(seconds_since_go(now))) {
      const uint64_t nap_tsc = rte_get_tsc_cycles();
      const bool ticked = tick_period != 0 && attached_;
      const uint64_t nap_ns = naps.nap_ns(nap_tsc, ticked ? std::optional(next_tick) : std::nullopt,
                                          ticked ? scheduler_->longest_absence_ns() : Scheduler::kNoAbsenceBound);
      const timespec nap{.tv_sec = 0, .tv_nsec = static_cast<long>(nap_ns)};
      clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, nullptr);
      next_nap = naps.next_nap_tsc(nap_tsc, nap_ns);
    }
    // 4. The measurement window opened after the warm-up, and closed when the traffic ends.
    if (!window_begun_ && now >= window_begin) {
      window_begin_ = snapshot(seconds_since_go(now));
      window_begun_ = true;
      sink_->set_measuring(true);
    }
    if (window_begun_ && !window_ended_ && !generating) {
      window_end_ = snapshot(seconds_since_go(now));
      window_ended_ = true;
      sink_->set_measuring(false);
    }
    // 5. Every 10 ms: crashed workers reaped (hung ones looked for at each progress report), the run ended on
    // failure, interruption or a drained chain, and every 250 ms progress reported.
    if (now >= next_housekeeping) {
      next_housekeeping = now + housekeeping_period;
      bool progress_due = now >= next_progress;
      if (!relayout_) {  // its hold would read as idle instances (Autoscaler::relaid_out)
        for (json& event : autoscaler_->tick(now, seconds_since_go(now))) {
          event["event"] = "scale";
          emit(events_, event);
        }
      }
      mirror_external_counters();
      // A service's live changes: new ones taken, those the runtimes took answered.
      take_commands(seconds_since_go(now));
      follow_changes(seconds_since_go(now));
      if (scheduler_switched_) {
        scheduler_switched_ = false;
        tick_period = tick_period_of(*scheduler_);
        next_tick = now;
      }
      check_workers(seconds_since_go(now), progress_due);
      take_cgroup_failures();
      if (g_interrupted && until_stopped && window_end == UINT64_MAX) {
        // The way such a run ends: the traffic stops now (the window closes at the next turn), what is in the
        // chains drains, and the results are whole.
        window_end = std::max(now, window_begin);
        drain_end = window_end + cycles(d_.drain_s);
      } else if (g_interrupted && !until_stopped && !interrupted_) {
        interrupted_ = true;
        fail("interrupted");
      }
      if (!error_.empty()) {
        // OS counters come from /proc: read the window's end now, while the workers that are alive still are.
        for (pid_t task : task_ids_) os_at_failure_.push_back(task > 0 ? sample_os_counters(task) : OsSample{});
        break;
      }
      if (!generating) {
        bool rings_empty = true;
        for (rte_ring* ring : rings_) rings_empty = rings_empty && rte_ring_count(ring) == 0;
        // A scaled egress may still hold moved flows' packets, waiting for their old instances; and an NF its
        // scheduler stopped between taking a batch and handing it on (UNiS) holds it until its next turn. A module
        // that decides by ring occupancy never gives that turn once every ring is empty: it lets go of the workers
        // then, so the batch ends at the sink rather than in flight.
        std::optional<size_t> holder = rings_empty ? worker_holding_packets() : std::nullopt;  // only read then
        if ((rings_empty && autoscaler_->settled() && !holder) || now >= drain_end) break;
        if (rings_empty && holder && attached_ && scheduler_->holds(*holder)) {
          detach_scheduler();
          released_for_drain_ = true;
        }
      }
      if (progress_due) {
        next_progress = now + progress_period;
        uint64_t generated = 0, delivered = 0, dropped = 0;
        for (size_t c = 0; c < d_.chains.size(); c++) {
          generated += generator_->generated(static_cast<int>(c));
          delivered += sink_->delivery(static_cast<int>(c)).delivered;
        }
        dropped += ring_drops_now();
        for (size_t n = 0; n < d_.nfs.size(); n++) dropped += counter_read(stats_->nfs[n].packets_dropped);
        for (size_t c = 0; c < d_.chains.size(); c++) dropped += counter_read(stats_->chains[c].entry_backpressure);
        double interval = static_cast<double>(now - last_progress_tsc) / hz_;
        json progress = {{"event", "progress"},
                         {"t", seconds_since_go(now)},
                         {"phase", now < window_begin ? "warmup"
                                   : generating       ? "measure"
                                                      : "drain"},
                         {"generated", generated},
                         {"delivered", delivered},
                         {"dropped", dropped},
                         {"mpps", static_cast<double>(delivered - last_progress_delivered) / interval / 1e6}};
        if (d_.live_metrics) progress["metrics"] = live_metrics();
        emit(events_, progress);
        last_progress_delivered = delivered;
        last_progress_tsc = now;
      }
    }
  }
  refuse_unfinished_changes();
  refuse_unfinished_relayout();
  refuse_unfinished_addition();
  // The control plane's stall watchdog expects progress only until here (stopping and probes report none).
  emit(events_, {{"event", "traffic_ended"}});
}

bool Run::probe_finished() const {
  for (const auto& [name, probe] : probes_)
    if (probe->finished()) return true;
  return false;
}

bool Run::idle_work_beside_traffic(double now_s) const {
  if ((relayout_ && relayout_->staging) || (addition_ && !addition_->started)) return true;
  return std::any_of(pending_changes_.begin(), pending_changes_.end(),
                     [&](const PendingChange& change) { return now_s - change.requested_s < kBuildNapSeconds; });
}

void Run::take_cgroup_failures() {
  if (!cgroup_work_->has_failures()) return;
  for (std::string& failure : cgroup_work_->take_failures()) {
    emit(events_, {{"event", "warning"}, {"message", failure}});
    warnings_.push_back(std::move(failure));
  }
}

void Run::detach_scheduler() {
  if (!attached_) return;
  scheduler_->detach(*view_);
  attached_ = false;
}

void Run::probe_after_traffic() {
  bool taken_over = false;
  for (const auto& [name, probe] : probes_) taken_over |= probe->takes_workers_over();
  if (!taken_over) return;
  detach_scheduler();  // the probes' own controllers take the workers over
  for (const auto& [name, probe] : probes_)
    if (probe->takes_workers_over()) probe->after_traffic(*probe_view_);
}

}  // namespace tandem
