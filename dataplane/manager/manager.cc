// The manager's run: set up hugepage memory, start and attach workers, then the control loop:
//   1. generate the packets due, 2. drain the chains' exits into the sink, 3. tick the scheduler module,
//   4. every 10 ms reap crashed workers, 5. every 250 ms report progress and look for hung workers;
// then stop, account for every packet and write the results.
#include "manager.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <map>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_memzone.h>

#include "catalog/catalog.h"
#include "contract/deployment.h"
#include "contract/eal_args.h"
#include "contract/idle_wait.h"
#include "contract/packet_meta.h"
#include "contract/run_timing.h"
#include "external_nf.h"
#include "generator.h"
#include "os_counters.h"
#include "probes/probe.h"
#include "schedulers/scheduler.h"
#include "sink.h"
#include "worker_launcher.h"

namespace tandem {

namespace {

// A worker that finishes no loop iteration for this long is hung (or starved, if its scheduler gives it no CPU).
// The longest legitimate iteration is one burst of the costliest NF: 1024 packets x 1e6 cycles is < 0.5 s.
constexpr double kHangSeconds = 0.75;

volatile std::sig_atomic_t g_interrupted = 0;
void on_signal(int) { g_interrupted = 1; }

void emit(FILE* events, const json& event) {
  fprintf(events, "%s\n", event.dump().c_str());
  fflush(events);
}

// Counters at one instant, to difference over the measurement window.
struct Snapshot {
  double tsc_seconds = 0;
  std::vector<uint64_t> generated, delivered, delivered_bytes;
  std::vector<uint64_t> wasted, entry_backpressure;  // per chain: drops after NF work, drops at the entry
  std::vector<NfCounters> nfs;
  std::vector<OsSample> os;  // per worker
};

struct WorkerState {
  pid_t pid = 0;
  bool exited = false;
  std::string exit_description;
  uint64_t last_heartbeat = 0;
  double heartbeat_changed_s = 0;
  OsSample at_heartbeat_change;
  bool starvation_reported = false;
  bool hung = false;  // declared hung: it will not stop by itself
};

class Run {
 public:
  Run(Deployment deployment, json original, FILE* events)
      : d_(std::move(deployment)), original_(std::move(original)), events_(events) {}
  int execute();

 private:
  void set_up_memory();
  void start_workers();
  void control_loop();
  void check_workers(double now_s, bool check_hangs);
  // Packets of a chain that an NF processed and a full ring further down then dropped: wasted work.
  uint64_t wasted_work(int chain) const;
  void fail(const std::string& message, const std::string& nf = "");
  void stop_workers();
  void stop_externals_one_by_one();
  void probe_after_traffic();
  bool probe_finished() const;
  void catch_up_ring_counters();
  Snapshot snapshot(double now_s);
  json results();
  json profile_results() const;
  double seconds_since_go(uint64_t tsc) const { return static_cast<double>(tsc - go_tsc_) / hz_; }
  std::string nf_names_of(int worker) const;
  // Worker w has exited: neither it nor its task may be signalled or scheduled any more.
  void forget(size_t w) { pids_[w] = task_ids_[w] = 0; }
  // True once worker w has exited (reaped now or before); records how it ended and forgets it.
  bool reap(size_t w);
  void mirror_external_counters();
  json external_report(int nf) const;

  Deployment d_;
  json original_;
  FILE* events_;
  double hz_ = 0;
  uint64_t go_tsc_ = 0;
  rte_mempool* pool_ = nullptr;
  StatsZone* stats_ = nullptr;
  std::vector<rte_ring*> rings_;
  std::unique_ptr<Scheduler> scheduler_;
  std::vector<pid_t> pids_;  // worker processes, or external NFs' applications
  // What schedulers switch and /proc is read for: the worker process, or an external NF's forwarding thread.
  std::vector<pid_t> task_ids_;
  std::vector<std::unique_ptr<ExternalNf>> externals_;  // by worker; null for Tandem workers
  std::vector<WorkerState> workers_;
  std::unique_ptr<Generator> generator_;
  std::unique_ptr<Sink> sink_;
  std::map<std::string, std::unique_ptr<Probe>> probes_;  // by name, from the run's `profile`
  bool probes_drive_traffic_ = false;  // a probe sends the packets (the cycle estimator): no paced traffic
  std::unique_ptr<ProbeView> probe_view_;
  std::unique_ptr<SchedulerView> view_;
  Snapshot window_begin_, window_end_;
  bool window_begun_ = false, window_ended_ = false;
  std::vector<OsSample> os_at_failure_;  // the workers' OS counters when a run failed, before they were stopped
  uint64_t ring_counts_caught_up_ = 0;  // ring operations a killed worker did not live to count
  std::string error_, failed_nf_;
  bool interrupted_ = false;
  bool attached_ = false;
  bool killed_workers_ = false;
  std::vector<std::string> warnings_;
};

std::string Run::nf_names_of(int worker) const {
  std::string names;
  for (const Segment& s : d_.workers[worker].segments)
    for (int nf : s.nfs) names += (names.empty() ? "" : ",") + d_.nfs[nf].name;
  return names;
}

void Run::fail(const std::string& message, const std::string& nf) {
  if (!error_.empty()) return;  // the first failure is the cause; later ones are consequences
  error_ = message;
  failed_nf_ = nf;
  emit(events_, {{"event", "error"}, {"message", message}, {"nf", nf}});
}

void Run::set_up_memory() {
  std::vector<std::string> args = primary_eal_args(d_);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  if (rte_eal_init(static_cast<int>(argv.size()), argv.data()) < 0)
    throw std::runtime_error(std::string("DPDK EAL init failed: ") + rte_strerror(rte_errno) +
                             " (hugepages reserved and mounted? see the manager log)");
  hz_ = static_cast<double>(rte_get_tsc_hz());

  // The pool's ring is shared by every process, and a scheduler may stop a process anywhere, also halfway
  // through returning mbufs. In the default MP/MC mode every later producer then spins until that process runs
  // again; if the spinner is the manager, whose loop is what would let it run (unis), nothing ever moves.
  // Relaxed-tail-sync mode lets producers finish independently; with the head-tail distance at the ring's
  // capacity, a stopped producer only delays when the objects it was returning become visible.
  pool_ = rte_pktmbuf_pool_create_by_ops(kMbufPoolName, mbuf_pool_size(d_), kMbufCache, kMbufPrivSize, RTE_MBUF_DEFAULT_BUF_SIZE,
                                         SOCKET_ID_ANY, "ring_mt_rts");
  if (pool_ == nullptr) throw std::runtime_error(std::string("cannot create the mbuf pool: ") + rte_strerror(rte_errno));
  auto* pool_ring = static_cast<rte_ring*>(pool_->pool_data);
  if (rte_ring_set_prod_htd_max(pool_ring, rte_ring_get_capacity(pool_ring)) != 0)
    throw std::runtime_error("cannot relax the mbuf pool ring's head-tail distance");

  const rte_memzone* zone = rte_memzone_reserve(kStatsZoneName, sizeof(StatsZone), SOCKET_ID_ANY, 0);
  if (zone == nullptr) throw std::runtime_error(std::string("cannot reserve the stats memzone: ") + rte_strerror(rte_errno));
  stats_ = static_cast<StatsZone*>(zone->addr);
  memset(stats_, 0, sizeof(StatsZone));

  bool any_external = false;
  for (const WorkerPlan& plan : d_.workers) any_external = any_external || plan.runtime == Runtime::External;
  if (any_external)
    for (unsigned i = 0; i < rte_socket_count(); i++) create_pool_for_external_apps(static_cast<unsigned>(rte_socket_id_by_idx(i)));

  for (const RingConfig& config : d_.rings) {
    // One producer and one consumer per ring; EXACT_SZ makes the usable capacity the spec's number.
    rte_ring* ring = rte_ring_create(ring_object_name(config.index).c_str(), config.capacity, SOCKET_ID_ANY,
                                     RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
    if (ring == nullptr) throw std::runtime_error("cannot create ring " + config.name + ": " + rte_strerror(rte_errno));
    rings_.push_back(ring);
  }
}

void Run::start_workers() {
  std::string deployment_path = d_.paths.run_dir + "/deployment.json";
  std::ofstream(deployment_path) << deployment_to_json(d_, original_).dump(2);
  // External applications' main lcores wait on stdin on the control core; their ids must be unique too.
  int next_external_main_lcore = RTE_MAX_LCORE - 1;
  for (const WorkerPlan& plan : d_.workers) {
    externals_.emplace_back();
    pid_t pid = 0;
    if (plan.runtime == Runtime::External) {
      const Segment& segment = plan.segments.front();
      externals_.back() = std::make_unique<ExternalNf>(d_, plan, rings_[segment.in_ring], rings_[segment.out_ring]);
      pid = externals_.back()->launch(next_external_main_lcore--);
    } else {
      pid = launch_worker(d_, plan, deployment_path);
    }
    pids_.push_back(pid);
    task_ids_.push_back(plan.runtime == Runtime::External ? 0 : pid);  // an external NF's thread is known once it forwards
    workers_.push_back({.pid = pid});
  }
  view_ = std::make_unique<SchedulerView>(SchedulerView{d_, *stats_, rings_, task_ids_, WorkerHints(*stats_)});
  // Secondaries attach in ~40 ms each; allow generously for a loaded machine.
  uint64_t deadline = rte_get_tsc_cycles() + static_cast<uint64_t>(hz_ * (kAttachSeconds + kAttachSecondsPerWorker * static_cast<double>(pids_.size())));
  for (;;) {
    bool all_ready = true;
    for (size_t w = 0; w < pids_.size(); w++) {
      if (reap(w)) {
        std::string names = nf_names_of(static_cast<int>(w));
        std::string where = externals_[w] ? "it printed: " + externals_[w]->log_tail() : "its message is in the manager log";
        fail("NF " + names + " failed to start: " + workers_[w].exit_description + " (" + where + ")", names);
        throw std::runtime_error(error_);
      }
      if (externals_[w] && task_ids_[w] == 0 && (task_ids_[w] = externals_[w]->forwarding_thread()) != 0)
        flag_store(stats_->workers[w].ready, 1u);
      all_ready = all_ready && flag_load(stats_->workers[w].ready) != 0;
    }
    if (all_ready) break;
    if (g_interrupted) throw std::runtime_error("interrupted while starting workers");
    if (rte_get_tsc_cycles() > deadline) {
      std::string late;
      for (size_t w = 0; w < pids_.size(); w++)
        if (flag_load(stats_->workers[w].ready) == 0)
          late += (late.empty() ? "" : "; ") + nf_names_of(static_cast<int>(w)) +
                  (externals_[w] ? " (not forwarding; it printed: " + externals_[w]->log_tail() + ")" : "");
      throw std::runtime_error("NFs did not attach within the start-up timeout: " + late);
    }
    usleep(1000);
  }
  json list = json::array();
  for (size_t w = 0; w < pids_.size(); w++)
    list.push_back({{"name", d_.workers[w].name}, {"pid", pids_[w]}, {"core", d_.workers[w].core}, {"nfs", nf_names_of(static_cast<int>(w))}});
  emit(events_, {{"event", "started"}, {"workers", list}});
}

uint64_t Run::wasted_work(int chain) const {
  const std::vector<int>& rings = d_.chains[chain].rings;
  uint64_t wasted = 0;
  for (size_t i = 1; i < rings.size(); i++) wasted += counter_read(stats_->rings[rings[i]].dropped_full);
  return wasted;
}

bool Run::reap(size_t w) {
  if (workers_[w].exited) return true;
  auto status = reap_if_exited(pids_[w]);
  if (!status) return false;
  workers_[w].exited = true;
  workers_[w].exit_description = describe_exit(*status);
  forget(w);
  return true;
}

void Run::mirror_external_counters() {
  for (const auto& external : externals_)
    if (external) external->mirror_counters(*stats_);
}

json Run::external_report(int nf) const {
  for (size_t w = 0; w < d_.workers.size(); w++)
    if (externals_[w] && d_.workers[w].segments.front().nfs.front() == nf)
      return {{"application", d_.nfs[nf].args["app"]},
              {"forward_mode", d_.nfs[nf].args["forward_mode"]},
              {"port", externals_[w]->port()},
              {"forwarding_thread", externals_[w]->thread() ? json(externals_[w]->thread()) : json()},
              {"log", externals_[w]->log_path()}};
  return json::object();
}

Snapshot Run::snapshot(double now_s) {
  mirror_external_counters();
  Snapshot s;
  s.tsc_seconds = now_s;
  for (size_t c = 0; c < d_.chains.size(); c++) {
    s.generated.push_back(generator_->generated(static_cast<int>(c)));
    s.delivered.push_back(sink_->delivery(static_cast<int>(c)).delivered);
    s.delivered_bytes.push_back(sink_->delivery(static_cast<int>(c)).delivered_bytes);
    s.wasted.push_back(wasted_work(static_cast<int>(c)));
    s.entry_backpressure.push_back(counter_read(stats_->chains[c].entry_backpressure));
  }
  for (size_t n = 0; n < d_.nfs.size(); n++) {
    NfCounters copy{};
    const NfCounters& live = stats_->nfs[n];
    copy.packets_in = counter_read(live.packets_in);
    copy.packets_out = counter_read(live.packets_out);
    copy.packets_dropped = counter_read(live.packets_dropped);
    copy.batches = counter_read(live.batches);
    copy.empty_polls = counter_read(live.empty_polls);
    copy.busy_cycles = counter_read(live.busy_cycles);
    copy.service_cycles = counter_read(live.service_cycles);
    copy.service_packets = counter_read(live.service_packets);
    s.nfs.push_back(copy);
  }
  for (pid_t task : task_ids_) s.os.push_back(task > 0 ? sample_os_counters(task) : OsSample{});
  return s;
}

void Run::check_workers(double now_s, bool check_hangs) {
  for (size_t w = 0; w < pids_.size(); w++) {
    WorkerState& state = workers_[w];
    if (state.exited) continue;
    if (reap(w)) {
      fail("NF " + nf_names_of(static_cast<int>(w)) + " (pid " + std::to_string(state.pid) + ") " + state.exit_description +
               " at t=" + std::to_string(now_s).substr(0, 5) + " s",
           nf_names_of(static_cast<int>(w)));
      continue;
    }
    if (!check_hangs) continue;
    if (externals_[w]) continue;  // an unmodified application keeps no heartbeat: only its exit is watched
    if (attached_ && scheduler_->holds(w)) {
      // Parked by its scheduler: no iterations is the point, not a hang; start counting when it is let run.
      state.heartbeat_changed_s = now_s;
      state.at_heartbeat_change = sample_os_counters(state.pid);
      continue;
    }
    uint64_t heartbeat = counter_read(stats_->workers[w].heartbeat);
    if (heartbeat != state.last_heartbeat || state.heartbeat_changed_s == 0) {
      state.last_heartbeat = heartbeat;
      state.heartbeat_changed_s = now_s;
      state.at_heartbeat_change = sample_os_counters(state.pid);
      continue;
    }
    // Checked every 250 ms, so a hang is named within a second of its start.
    if (now_s - state.heartbeat_changed_s < kHangSeconds) continue;
    // No loop iteration for kHangSeconds. Spinning on a CPU or sleeping means the NF itself is stuck;
    // runnable but given no CPU means its scheduler starves it, which is a result, not a failure.
    OsSample now = sample_os_counters(state.pid);
    uint64_t cpu_used = (now.cpu_ns && state.at_heartbeat_change.cpu_ns) ? *now.cpu_ns - *state.at_heartbeat_change.cpu_ns : 0;
    std::string name = nf_names_of(static_cast<int>(w));
    if (now.state != 'R' || cpu_used > static_cast<uint64_t>(kHangSeconds * 0.5e9)) {
      state.hung = true;
      fail("NF " + name + " (pid " + std::to_string(state.pid) + ") is hung: no loop iteration for " +
               std::to_string(now_s - state.heartbeat_changed_s).substr(0, 4) + " s while " +
               (now.state != 'R' ? std::string("in state ") + now.state : "spinning on its CPU"),
           name);
    } else if (!state.starvation_reported) {
      state.starvation_reported = true;
      std::string message = "NF " + name + " is starved: runnable but not scheduled for " +
                            std::to_string(now_s - state.heartbeat_changed_s).substr(0, 4) + " s";
      warnings_.push_back(message);
      emit(events_, {{"event", "warning"}, {"message", message}});
    }
  }
}

void Run::control_loop() {
  generator_ = std::make_unique<Generator>(d_, pool_, rings_, *stats_);
  sink_ = std::make_unique<Sink>(d_, rings_, *stats_);
  probes_ = create_probes(d_.profile, hz_);
  for (const auto& [name, probe] : probes_) probes_drive_traffic_ |= probe->drives_traffic();
  probe_view_ = std::make_unique<ProbeView>(ProbeView{d_, *generator_, *sink_, *stats_, pids_, hz_});
  scheduler_->attach(*view_);
  attached_ = true;

  const auto cycles = [&](double seconds) { return static_cast<uint64_t>(seconds * hz_); };
  go_tsc_ = rte_get_tsc_cycles();
  generator_->start(go_tsc_);
  flag_store(stats_->go, 1u);

  const uint64_t window_begin = go_tsc_ + cycles(d_.warmup_s);
  const uint64_t window_end = window_begin + cycles(d_.duration_s);
  const uint64_t drain_end = window_end + cycles(d_.drain_s);
  const uint64_t tick_period = scheduler_->tick_period_ns() ? cycles(static_cast<double>(scheduler_->tick_period_ns()) * 1e-9) : 0;
  const uint64_t housekeeping_period = cycles(0.01), progress_period = cycles(0.25);
  uint64_t next_tick = go_tsc_, next_housekeeping = go_tsc_, next_progress = go_tsc_ + progress_period;
  uint64_t last_progress_delivered = 0, last_progress_tsc = go_tsc_;

  for (;;) {
    uint64_t now = rte_get_tsc_cycles();
    bool generating = now < window_end && !probe_finished();
    if (generating) {
      for (const auto& [name, probe] : probes_) probe->poll(*probe_view_, now);
      if (!probes_drive_traffic_) generator_->poll(now);
    }
    sink_->poll(now);
    if (tick_period != 0 && now >= next_tick) {
      scheduler_->tick(*view_, now);
      next_tick += tick_period;
    }
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
    if (now >= next_housekeeping) {
      next_housekeeping = now + housekeeping_period;
      bool progress_due = now >= next_progress;
      mirror_external_counters();
      check_workers(seconds_since_go(now), progress_due);
      if (g_interrupted && !interrupted_) {
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
        if (rings_empty || now >= drain_end) break;
      }
      if (progress_due) {
        next_progress = now + progress_period;
        uint64_t generated = 0, delivered = 0, dropped = 0;
        for (size_t c = 0; c < d_.chains.size(); c++) {
          generated += generator_->generated(static_cast<int>(c));
          delivered += sink_->delivery(static_cast<int>(c)).delivered;
        }
        for (size_t r = 0; r < rings_.size(); r++) dropped += counter_read(stats_->rings[r].dropped_full);
        for (size_t n = 0; n < d_.nfs.size(); n++) dropped += counter_read(stats_->nfs[n].packets_dropped);
        for (size_t c = 0; c < d_.chains.size(); c++) dropped += counter_read(stats_->chains[c].entry_backpressure);
        double interval = static_cast<double>(now - last_progress_tsc) / hz_;
        emit(events_, {{"event", "progress"},
                       {"t", seconds_since_go(now)},
                       {"phase", now < window_begin ? "warmup" : generating ? "measure" : "drain"},
                       {"generated", generated},
                       {"delivered", delivered},
                       {"dropped", dropped},
                       {"mpps", static_cast<double>(delivered - last_progress_delivered) / interval / 1e6}});
        last_progress_delivered = delivered;
        last_progress_tsc = now;
      }
    }
  }
}

void Run::stop_externals_one_by_one() {
  // testpmd frees hugepage memory as it exits, and a secondary's free is an IPC round through the primary to
  // every other process; one that is exiting at the same moment never answers, and the request waits out
  // EAL's 5 s timeout. So the applications go one at a time, while everyone else still answers.
  for (size_t w = 0; w < externals_.size(); w++) {
    if (!externals_[w] || workers_[w].exited) continue;
    externals_[w]->request_stop();
    uint64_t deadline = rte_get_tsc_cycles() + static_cast<uint64_t>(kStopSeconds * hz_);
    while (rte_get_tsc_cycles() < deadline && !reap(w)) usleep(1000);
  }
}

void Run::stop_workers() {
  if (attached_ && view_) {
    try {
      scheduler_->detach(*view_);  // before `stop`: a starved worker needs a fair share of CPU to see the flag
    } catch (const std::exception& e) {
      warnings_.push_back(std::string("scheduler detach: ") + e.what());
    }
  }
  stop_externals_one_by_one();
  if (stats_ != nullptr) {
    flag_store(stats_->stop, 1u);
    for (size_t w = 0; w < pids_.size(); w++) idle_wake(stats_->workers[w]);  // blocked workers see `stop` now
  }
  // Workers leave their loops, write their reports and exit (without EAL cleanup: see worker_main.cc).
  uint64_t deadline = rte_get_tsc_cycles() + static_cast<uint64_t>(kStopSeconds * hz_);
  for (;;) {
    bool all_exited = true;
    for (size_t w = 0; w < pids_.size(); w++)
      if (!reap(w)) all_exited = false;
    if (all_exited) break;
    bool give_up = rte_get_tsc_cycles() > deadline;
    if (!give_up) {
      // A hung worker will not see the stop flag: kill it now rather than after the grace period.
      for (size_t w = 0; w < pids_.size(); w++)
        if (!workers_[w].exited && workers_[w].hung) {
          kill(pids_[w], SIGKILL);
          killed_workers_ = true;
        }
    } else {
      for (size_t w = 0; w < pids_.size(); w++) {
        if (workers_[w].exited) continue;
        kill(pids_[w], SIGKILL);
        int status = 0;
        waitpid(pids_[w], &status, 0);
        workers_[w].exited = true;
        workers_[w].exit_description = "killed: did not stop within " + std::to_string(static_cast<int>(kStopSeconds)) + " s";
        warnings_.push_back("NF " + nf_names_of(static_cast<int>(w)) + " did not stop within " + std::to_string(static_cast<int>(kStopSeconds)) +
                            " s and was killed");
        killed_workers_ = true;
        forget(w);
      }
      break;
    }
    usleep(1000);
  }
}

bool Run::probe_finished() const {
  for (const auto& [name, probe] : probes_)
    if (probe->finished()) return true;
  return false;
}

void Run::probe_after_traffic() {
  bool taken_over = false;
  for (const auto& [name, probe] : probes_) taken_over |= probe->takes_workers_over();
  if (!taken_over) return;
  scheduler_->detach(*view_);  // the probes' own controllers take the workers over
  attached_ = false;
  for (const auto& [name, probe] : probes_)
    if (probe->takes_workers_over()) probe->after_traffic(*probe_view_);
}

// A worker killed between a ring operation and the counter update after it leaves that counter behind the ring.
// The ring counts every enqueue and dequeue itself, in the 32-bit tails of its producer and consumer, so after
// an unclean end the counters catch up from them (the lag is a burst at most, far below 2^31). Only then: in a
// clean run a lag would be a bug, and catching up would hide it.
void Run::catch_up_ring_counters() {
  for (size_t r = 0; r < rings_.size(); r++) {
    auto catch_up = [&](uint64_t& counter, uint32_t tail) {
      uint32_t behind = tail - static_cast<uint32_t>(counter_read(counter));
      if (behind == 0 || behind >= (1u << 31)) return;
      counter_add(counter, uint64_t{behind});
      ring_counts_caught_up_ += behind;
    };
    catch_up(stats_->rings[r].enqueued, rings_[r]->prod.tail);
    catch_up(stats_->rings[r].dequeued, rings_[r]->cons.tail);
  }
}

json Run::results() {
  mirror_external_counters();  // the applications have stopped: their ports' counters are final
  for (size_t w = 0; w < externals_.size(); w++)
    if (externals_[w] && workers_[w].exit_description == "exited with status 0")
      if (auto disagreement = externals_[w]->settle_drops(*stats_)) warnings_.push_back(*disagreement);
  double now_s = seconds_since_go(rte_get_tsc_cycles());
  if (!window_begun_) window_begin_ = snapshot(now_s);
  if (!window_ended_) {  // a failed run: the window ends at the failure
    window_end_ = snapshot(now_s);
    if (!os_at_failure_.empty()) window_end_.os = os_at_failure_;
  }
  double window_s = std::max(window_end_.tsc_seconds - window_begin_.tsc_seconds, 1e-9);

  if (killed_workers_ || !failed_nf_.empty()) catch_up_ring_counters();

  // Packets a worker holds between dequeue and enqueue; a worker that stopped cleanly holds none.
  std::vector<int64_t> held_by_nf(d_.nfs.size(), 0);
  std::vector<std::string> worker_of_nf(d_.nfs.size());
  bool clean_workers_hold_nothing = true;
  for (const WorkerPlan& plan : d_.workers) {
    for (const Segment& segment : plan.segments) {
      int64_t held = static_cast<int64_t>(counter_read(stats_->rings[segment.in_ring].dequeued)) -
                     static_cast<int64_t>(counter_read(stats_->rings[segment.out_ring].enqueued)) -
                     static_cast<int64_t>(counter_read(stats_->rings[segment.out_ring].dropped_full));
      for (int nf : segment.nfs) {
        held -= static_cast<int64_t>(counter_read(stats_->nfs[nf].packets_dropped));
        worker_of_nf[nf] = plan.name;
      }
      held_by_nf[segment.nfs.front()] = held;
      if (held != 0 && workers_[plan.index].exit_description == "exited with status 0") clean_workers_hold_nothing = false;
    }
  }

  json chains = json::array();
  uint64_t in_flight_total = 0;
  bool all_exact = clean_workers_hold_nothing;
  for (const ChainConfig& chain : d_.chains) {
    int c = chain.index;
    const ChainDelivery& delivery = sink_->delivery(c);
    uint64_t generated = generator_->generated(c);
    json ring_drops = json::object(), nf_drops = json::object();
    uint64_t dropped = 0, in_rings = 0;
    int64_t in_nfs = 0;
    bool counters_match_rings = true;
    for (int r : chain.rings) {
      uint64_t drops = counter_read(stats_->rings[r].dropped_full);
      ring_drops[d_.rings[r].name] = drops;
      dropped += drops;
      uint64_t occupancy = rte_ring_count(rings_[r]);
      in_rings += occupancy;
      counters_match_rings = counters_match_rings && counter_read(stats_->rings[r].enqueued) - counter_read(stats_->rings[r].dequeued) == occupancy;
    }
    for (int n : chain.nfs) {
      uint64_t drops = counter_read(stats_->nfs[n].packets_dropped);
      nf_drops[d_.nfs[n].name] = drops;
      dropped += drops;
      in_nfs += held_by_nf[n];
    }
    uint64_t entry_backpressure = counter_read(stats_->chains[c].entry_backpressure);
    dropped += entry_backpressure;
    uint64_t in_flight = in_rings + static_cast<uint64_t>(in_nfs);
    in_flight_total += in_flight;
    bool exact = counters_match_rings && in_nfs >= 0 && generated == delivery.delivered + dropped + in_flight;
    all_exact = all_exact && exact;
    uint64_t window_delivered = window_end_.delivered[c] - window_begin_.delivered[c];
    uint64_t window_generated = window_end_.generated[c] - window_begin_.generated[c];
    json chain_json = {
        {"name", chain.name},
        {"nfs", json::array()},
        {"generated", generated},
        {"delivered", delivery.delivered},
        {"delivered_bytes", delivery.delivered_bytes},
        {"hop_errors", delivery.hop_errors},
        {"dropped", {{"total", dropped}, {"rings", ring_drops}, {"nfs", nf_drops}, {"entry_backpressure", entry_backpressure}}},
        {"wasted_work", wasted_work(c)},
        {"in_flight", {{"total", in_flight}, {"rings", in_rings}, {"nfs", in_nfs}}},
        {"accounting_exact", exact},
        {"window",
         {{"seconds", window_s},
          {"generated", window_generated},
          {"delivered", window_delivered},
          {"offered_mpps", static_cast<double>(window_generated) / window_s / 1e6},
          {"delivered_mpps", static_cast<double>(window_delivered) / window_s / 1e6},
          {"delivered_gbps", static_cast<double>(window_end_.delivered_bytes[c] - window_begin_.delivered_bytes[c]) * 8 / window_s / 1e9},
          {"wasted_pps", static_cast<double>(window_end_.wasted[c] - window_begin_.wasted[c]) / window_s},
          {"entry_backpressure_pps", static_cast<double>(window_end_.entry_backpressure[c] - window_begin_.entry_backpressure[c]) / window_s}}},
        {"latency_us", sink_->latency(c).summary_us(hz_)},
    };
    for (int n : chain.nfs) chain_json["nfs"].push_back(d_.nfs[n].name);
    chains.push_back(chain_json);
  }

  // Every mbuf outside the pool and its caches must be one the accounting says is in flight.
  uint64_t mbufs_in_use = rte_mempool_in_use_count(pool_);
  bool pool_matches = mbufs_in_use == in_flight_total;
  all_exact = all_exact && pool_matches;

  std::map<std::string, json> nf_reports;
  for (size_t w = 0; w < d_.workers.size(); w++)
    for (size_t s = 0; s < d_.workers[w].segments.size(); s++) {
      std::string path = d_.paths.run_dir + "/nf-report-" + std::to_string(w) + "-" + std::to_string(s) + ".json";
      std::ifstream in(path);
      if (!in) continue;
      json reports = json::parse(in, nullptr, false);  // named: a temporary would die before the loop runs
      if (reports.is_object())
        for (const auto& [name, report] : reports.items()) nf_reports[name] = report;
      unlink(path.c_str());
    }

  json worker_list = json::array();
  std::map<std::string, json> os_by_worker;
  for (size_t w = 0; w < d_.workers.size(); w++) {
    json os = os_rates(window_begin_.os[w], window_end_.os[w]);
    // A process that ended before the window closed has no /proc entry to read: say so, so the report does not
    // blame the machine for the empty columns.
    if (!os["unavailable"].empty() && !window_end_.os[w].cpu_ns && !workers_[w].exit_description.empty())
      os["unavailable_reason"] = "its process had ended (" + workers_[w].exit_description + ") when the window closed";
    os_by_worker[d_.workers[w].name] = os;
    worker_list.push_back({{"name", d_.workers[w].name},
                           {"pid", workers_[w].pid},
                           {"core", d_.workers[w].core},
                           {"nfs", nf_names_of(static_cast<int>(w))},
                           {"exit", workers_[w].exit_description},
                           {"yields", counter_read(stats_->workers[w].yields)},
                           {"sleeps", counter_read(stats_->workers[w].sleeps)},
                           {"os", os}});
  }

  json nfs = json::array();
  for (const NfConfig& nf : d_.nfs) {
    const NfCounters& a = window_begin_.nfs[nf.index];
    const NfCounters& b = window_end_.nfs[nf.index];
    const NfCounters& total = stats_->nfs[nf.index];
    uint64_t window_in = b.packets_in - a.packets_in;
    uint64_t busy = b.busy_cycles - a.busy_cycles;
    uint64_t service = b.service_cycles - a.service_cycles, service_packets = b.service_packets - a.service_packets;
    nfs.push_back({{"name", nf.name},
                   {"type", nf.type},
                   {"chain", d_.chains[nf.chain].name},
                   {"core", nf.core},
                   {"worker", worker_of_nf[nf.index]},
                   {"args", nf.args},
                   {"packets_in", counter_read(total.packets_in)},
                   {"packets_out", counter_read(total.packets_out)},
                   {"packets_dropped", counter_read(total.packets_dropped)},
                   {"batches", counter_read(total.batches)},
                   {"empty_polls", counter_read(total.empty_polls)},
                   {"busy_cycles", counter_read(total.busy_cycles)},
                   {"held_at_stop", held_by_nf[nf.index]},
                   {"window",
                    {{"in_mpps", static_cast<double>(window_in) / window_s / 1e6},
                     {"out_mpps", static_cast<double>(b.packets_out - a.packets_out) / window_s / 1e6},
                     // An external NF's time inside its application is not visible to Tandem: unknown, not 0.
                     {"busy_share", nf.external() ? json() : json(static_cast<double>(busy) / hz_ / window_s)},
                     // From undisturbed batches: a batch the NF was preempted in counts other processes' time.
                     {"cycles_per_packet", service_packets ? json(static_cast<double>(service) / static_cast<double>(service_packets)) : json()}}},
                   {"report", nf_reports.count(nf.name) ? nf_reports[nf.name] : external_report(nf.index)},
                   {"os", os_by_worker[worker_of_nf[nf.index]]}});
  }

  json rings = json::array();
  for (const RingConfig& ring : d_.rings)
    rings.push_back({{"name", ring.name},
                     {"chain", d_.chains[ring.chain].name},
                     {"capacity", ring.capacity},
                     {"enqueued", counter_read(stats_->rings[ring.index].enqueued)},
                     {"dequeued", counter_read(stats_->rings[ring.index].dequeued)},
                     {"dropped_full", counter_read(stats_->rings[ring.index].dropped_full)},
                     {"occupancy_at_stop", rte_ring_count(rings_[ring.index])}});

  return {{"name", d_.name},
          {"scheduler", {{"name", d_.scheduler.name}, {"options", d_.scheduler.options}, {"report", scheduler_->report(*view_)}}},
          {"scheduler_location", "control core " + std::to_string(d_.control_core) + ", beside generator and sink"},
          {"warmup_s", d_.warmup_s},
          {"duration_s", d_.duration_s},
          {"tsc_hz", hz_},
          {"generator_build_cycles_per_packet", generator_->build_cycles_per_packet()},
          {"chains", chains},
          {"nfs", nfs},
          {"rings", rings},
          {"workers", worker_list},
          {"accounting",
           {{"exact", all_exact},
            {"mbufs_in_use", mbufs_in_use},
            {"in_flight", in_flight_total},
            {"pool_matches_in_flight", pool_matches},
            {"clean_workers_hold_nothing", clean_workers_hold_nothing},
            {"allocation_failures", generator_->allocation_failures()},
            {"ring_counts_caught_up", ring_counts_caught_up_}}},
          {"warnings", warnings_},
          {"error", error_.empty() ? json() : json(error_)},
          {"failed_nf", failed_nf_.empty() ? json() : json(failed_nf_)},
          {"interrupted", interrupted_},
          {"profile", profile_results()}};
}

json Run::profile_results() const {
  json out = json::object();
  for (const auto& [name, probe] : probes_) {
    json report = probe->report(*probe_view_);
    if (!report.is_null()) out[name] = std::move(report);
  }
  return out;
}

int Run::execute() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  SpecErrors errors = check_deployment(d_);
  if (!errors.empty()) {
    for (const SpecError& e : errors) emit(events_, {{"event", "spec_error"}, {"path", e.path}, {"message", e.message}});
    return kExitBadSpec;
  }
  const SchedulerType& type = scheduler_types().at(d_.scheduler.name);
  scheduler_ = type.create(d_.scheduler.options);
  d_.workers = scheduler_->plan_workers(d_);
  bool ran = false;
  try {
    set_up_memory();
    start_workers();
    ran = true;
    control_loop();
    if (error_.empty()) probe_after_traffic();
  } catch (const std::exception& e) {
    fail(e.what());
  }
  stop_workers();
  if (ran) {
    json out = results();
    std::string path = d_.paths.run_dir + "/results.json";
    std::ofstream(path) << out.dump(2);
    emit(events_, {{"event", "done"}, {"results", path}});
  }
  // A worker killed while detaching may hold DPDK's shared memory lock forever; cleaning up would then wait
  // for it forever. The control plane removes the run's hugepage files and runtime directory either way.
  if (!killed_workers_) rte_eal_cleanup();
  if (interrupted_) return kExitInterrupted;
  return error_.empty() ? kExitOk : kExitRunFailed;
}

}  // namespace

int run_deployment(const json& doc, FILE* events) {
  Deployment deployment;
  try {
    deployment = parse_deployment(doc);
  } catch (const std::exception& e) {
    emit(events, {{"event", "spec_error"}, {"path", ""}, {"message", std::string("malformed run description: ") + e.what()}});
    return kExitBadSpec;
  }
  Run run(std::move(deployment), doc, events);
  return run.execute();
}

}  // namespace tandem
