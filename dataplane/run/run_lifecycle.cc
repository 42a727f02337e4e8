// The manager's run, its lifecycle: check the deployment, set up hugepage memory and rings, start and attach
// workers, run the control loop (and the probes that measure after the traffic), stop the workers, and write
// the results.
#include "run_lifecycle.h"

#include <sys/wait.h>

#include <algorithm>
#include <fstream>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_memzone.h>

#include "bounded_eal_cleanup.h"
#include "catalog/catalog.h"
#include "contract/eal_args.h"
#include "contract/idle_wait.h"
#include "contract/packet_meta.h"
#include "contract/run_timing.h"
#include "contract/start_gate.h"
#include "run.h"
#include "worker_launcher.h"

namespace tandem {

volatile std::sig_atomic_t g_interrupted = 0;

void emit(FILE* events, const json& event) {
  fprintf(events, "%s\n", event.dump().c_str());
  fflush(events);
}

namespace {
void on_signal(int) { g_interrupted = 1; }
// DPDK's clean-up takes milliseconds; one still running after this waits on a lock no process will let go.
constexpr double kEalCleanupSeconds = 3.0;
}  // namespace

std::string worker_nf_names(const Deployment& deployment, int worker) {
  std::string names;
  for (const Segment& s : deployment.workers[worker].segments)
    for (int nf : s.nfs) names += (names.empty() ? "" : ",") + deployment.nfs[nf].name;
  return names;
}

void Run::fail(const std::string& message, const std::string& nf) {
  if (!error_.empty()) return;  // the first failure is the cause; later ones are consequences
  error_ = message;
  failed_nf_ = nf;
  emit(events_, {{"event", "error"}, {"message", message}, {"nf", nf}});
}

rte_ring* make_ring(const RingConfig& config) {
  // One producer and one consumer per ring; EXACT_SZ makes the usable capacity the spec's number.
  return rte_ring_create(ring_object(config).c_str(), config.capacity, SOCKET_ID_ANY,
                         RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
}

void name_left_ring_apart(RingConfig& config) {
  config.object.clear();
  // Within RTE_RING_NAMESIZE: "tandem_ring_255.999" is 19 characters.
  for (int attempt = 1; attempt < 1000 && rte_ring_lookup(ring_object(config).c_str()) != nullptr; attempt++)
    config.object = ring_object_name(config.index) + "." + std::to_string(attempt);
}

void Run::set_up_memory() {
  if (std::string error = confine_to_control_core(d_.control_core); !error.empty()) throw std::runtime_error(error);
  std::vector<std::string> args = primary_eal_args(d_);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  if (rte_eal_init(static_cast<int>(argv.size()), argv.data()) < 0)
    throw std::runtime_error(std::string("DPDK EAL init failed: ") + rte_strerror(rte_errno) +
                             " (hugepages reserved and mounted? see the manager log)");
  hz_ = static_cast<double>(rte_get_tsc_hz());

  // The pool is shared by every process, and a process may be stopped or killed anywhere, also halfway through
  // taking or returning mbufs. A ring-based pool blocks then: in MP/MC mode every later producer spins until the
  // stopped one runs again (if the spinner is the manager, whose loop is what would let it run, nothing moves);
  // in relaxed-tail-sync mode one killed producer's reservation is never published, every later free stays
  // invisible behind it, and the pool runs dry (a clean-clone suite run hung that way on a killed testpmd).
  // DPDK's lock-free stack never waits for another process: a process cut mid-operation only loses the mbufs
  // it was moving, which the accounting reports as an interrupted free.
  pool_ = rte_pktmbuf_pool_create_by_ops(kMbufPoolName, mbuf_pool_size(d_), kMbufCache, kMbufPrivSize,
                                         RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY, "lf_stack");
  if (pool_ == nullptr)
    throw std::runtime_error(std::string("cannot create the mbuf pool (DPDK's lf_stack mempool driver): ") +
                             rte_strerror(rte_errno));

  const rte_memzone* zone = rte_memzone_reserve(kStatsZoneName, sizeof(StatsZone), SOCKET_ID_ANY, 0);
  if (zone == nullptr)
    throw std::runtime_error(std::string("cannot reserve the stats memzone: ") + rte_strerror(rte_errno));
  stats_ = static_cast<StatsZone*>(zone->addr);
  memset(stats_, 0, sizeof(StatsZone));
  // The probes the run's `profile` names, made before the workers: some set up memory the workers attach to.
  probes_ = create_probes(d_.profile, hz_);
  for (const auto& [name, probe] : probes_) probe->before_workers(d_);

  bool any_external = false;
  for (const WorkerPlan& plan : d_.workers) any_external = any_external || plan.runtime == Runtime::External;
  if (any_external) create_pools_for_external_apps();

  for (const RingConfig& config : d_.rings) {
    rte_ring* ring = make_ring(config);
    if (ring == nullptr) throw std::runtime_error("cannot create ring " + config.name + ": " + rte_strerror(rte_errno));
    rings_.push_back(ring);
  }
}

void Run::start_workers() {
  std::string deployment_path = write_deployment();
  // One worker at a time: each is launched once the one before it has attached. A secondary's EAL start-up takes
  // DPDK's shared memory lock (rte_mcfg_mem_*_lock, a spinning rwlock) while it maps the primary's hugepages and
  // whenever its heap must grow; started together, every starting worker spins on that lock beside the one that
  // holds it, all on the control core their affinity comes from, and the holder waits out the spinners' time
  // slices. 64 NFs started at once so burned ~0.4 s of CPU each and took ~20 s, sometimes past the timeout; one
  // by one, each attaches in its ~40 ms alone (the time it is given: attach_clock.h).
  for (const WorkerPlan& plan : d_.workers) launch_attached(plan, deployment_path);
  cgroup_work_ = std::make_unique<CgroupWorkQueue>();
  view_ = std::make_unique<SchedulerView>(
      SchedulerView{d_, *stats_, rings_, task_ids_, WorkerHints(*stats_), cgroup_work_.get()});
  json list = json::array();
  for (size_t w = 0; w < pids_.size(); w++) list.push_back(worker_entry(w));
  emit(events_, {{"event", "started"}, {"workers", list}});
}

std::string Run::write_deployment() const {
  std::ofstream(deployment_path()) << deployment_to_json(d_, original_).dump(2);
  return deployment_path();
}

size_t Run::launch_attached(const WorkerPlan& plan, const std::string& deployment_path) {
  uint64_t launched = rte_get_tsc_cycles();
  externals_.emplace_back();
  pid_t pid = 0;
  if (plan.runtime == Runtime::External) {
    const Segment& segment = plan.segments.front();
    externals_.back() =
        std::make_unique<ExternalNf>(d_, d_.nfs[segment.nfs.front()], plan, rings_[segment.in_rings.at(0)],
                                     rings_[segment.out_rings.at(0)]);  // one each: checked
    pid = launch_external(*externals_.back());
  } else {
    pid = launch_tandem_worker(d_, plan, deployment_path);
  }
  pids_.push_back(pid);
  task_ids_.push_back(plan.runtime == Runtime::External ? 0
                                                        : pid);  // an external NF's thread is known once it forwards
  workers_.push_back({.pid = pid});
  wait_until_attached(pids_.size() - 1, launched);
  return pids_.size() - 1;
}

pid_t Run::launch_tandem_worker(const Deployment& deployment, const WorkerPlan& plan,
                                const std::string& deployment_path, WorkerStart start) {
  uint64_t serial = reclaim_->next_serial();
  pid_t pid = launch_worker(deployment, plan, deployment_path, serial, start);
  std::vector<NfObjectReclaim::Nf> nfs;
  for (const Segment& segment : plan.segments)
    for (int nf : segment.nfs) nfs.push_back({nf, deployment.nfs[nf].type});
  reclaim_->watch(serial, pid, std::move(nfs));
  return pid;
}

pid_t Run::launch_external(ExternalNf& external, bool on_control_core) {
  // Two ids a process, unique across processes (mempool caches are indexed by lcore id in shared memory), apart
  // from the workers', which count up from 1 (a service's added workers take those removed ones gave back).
  int workers_highest = 0;
  for (const WorkerPlan& plan : d_.workers) workers_highest = std::max(workers_highest, plan.lcore_id);
  if (next_external_lcore_ - 1 <= workers_highest)
    throw std::runtime_error("no DPDK lcore id left for another application beside the workers' (up to " +
                             std::to_string(workers_highest) + "; RTE_MAX_LCORE " + std::to_string(RTE_MAX_LCORE) +
                             ")");
  int main_lcore = next_external_lcore_--;
  int forwarding_lcore = next_external_lcore_--;
  return external.launch(main_lcore, forwarding_lcore, on_control_core);
}

json Run::worker_entry(size_t w) const {
  json entry = {{"name", d_.workers[w].name},
                {"pid", pids_[w]},
                {"core", d_.workers[w].core},
                {"nfs", nf_names_of(static_cast<int>(w))}};
  if (workers_[w].attach_ms >= 0) entry["attach_ms"] = workers_[w].attach_ms;
  return entry;
}

void Run::wait_until_attached(size_t w, uint64_t launched_tsc) {
  AttachClock clock(pids_[w]);
  for (;;) {
    if (reap(w)) {
      std::string names = nf_names_of(static_cast<int>(w));
      std::string where =
          externals_[w] ? "it printed: " + externals_[w]->log_tail() : "its message is in the manager log";
      fail("NF " + names + " failed to start: " + workers_[w].exit_description + " (" + where + ")", names);
      throw std::runtime_error(error_);
    }
    if (externals_[w] && task_ids_[w] == 0 && (task_ids_[w] = externals_[w]->forwarding_thread()) != 0)
      flag_store(stats_->workers[w].ready, 1u);
    if (flag_load(stats_->workers[w].ready) != 0) {
      workers_[w].attach_ms = static_cast<double>(rte_get_tsc_cycles() - launched_tsc) / hz_ * 1e3;
      return;
    }
    if (g_interrupted) throw std::runtime_error("interrupted while starting workers");
    say_still_waiting("a worker attaching", launched_tsc);
    if (std::optional<std::string> late = clock.late()) {
      std::string names = nf_names_of(static_cast<int>(w)) + " (" + *late +
                          (externals_[w] ? "; not forwarding; it printed: " + externals_[w]->log_tail() : "") + ")";
      for (size_t next = w + 1; next < d_.workers.size(); next++)
        names += "; " + nf_names_of(static_cast<int>(next)) + " (not started)";
      throw std::runtime_error("NFs did not attach: " + names);
    }
    usleep(1000);
  }
}

void Run::say_still_waiting(const char* on, uint64_t since_tsc) {
  uint64_t now = rte_get_tsc_cycles(), second = static_cast<uint64_t>(hz_);
  if (now - since_tsc < second || now - last_waiting_event_tsc_ < second) return;
  last_waiting_event_tsc_ = now;
  emit(events_, {{"event", "waiting"}, {"on", on}});
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

void Run::settle_kernel_links() {
  if (!chain_ends_ ||
      std::none_of(d_.rings.begin(), d_.rings.end(), [](const RingConfig& ring) { return ring.kernel; }))
    return;
  if (!flag_load(stats_->kernel_links_quiet)) {
    auto sends_into_kernel_link = [this](const WorkerPlan& plan) {
      return std::any_of(plan.segments.begin(), plan.segments.end(),
                         [this](const Segment& s) { return any_kernel_link(d_, s.out_rings); });
    };
    for (size_t w = 0; w < d_.workers.size(); w++)
      if (sends_into_kernel_link(d_.workers[w]) && !workers_[w].exited && !flag_load(stats_->workers[w].left_loop))
        return;
    // A veth hands a frame to its peer's socket within the sender's system call: by now every frame is there.
    usleep(1000);
    flag_store(stats_->kernel_links_quiet, 1u);
  }
  sink_->poll();
}

void Run::stop_workers() {
  refuse_unfinished_addition();  // its processes are not the run's yet: they go first
  if (attached_ && view_) {
    try {
      scheduler_->detach(*view_);  // before `stop`: a starved worker needs a fair share of CPU to see the flag
      cgroup_work_->drain();       // its cgroups' too (the kernel moves no exiting thread)
    } catch (const std::exception& e) {
      warnings_.push_back(std::string("scheduler detach: ") + e.what());
    }
  }
  stop_externals_one_by_one();
  if (stats_ != nullptr) {
    flag_store(stats_->stop, 1u);
    wake_start_gate(*stats_);                                                 // a run that failed before `go`
    for (size_t w = 0; w < pids_.size(); w++) idle_wake(stats_->workers[w]);  // blocked workers see `stop` now
  }
  // Workers leave their loops, write their reports and exit (without EAL cleanup: see worker_main.cc).
  uint64_t deadline = rte_get_tsc_cycles() + static_cast<uint64_t>(kStopSeconds * hz_);
  for (;;) {
    settle_kernel_links();
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
        workers_[w].exit_description =
            "killed: did not stop within " + std::to_string(static_cast<int>(kStopSeconds)) + " s";
        warnings_.push_back("NF " + nf_names_of(static_cast<int>(w)) + " did not stop within " +
                            std::to_string(static_cast<int>(kStopSeconds)) + " s and was killed");
        killed_workers_ = true;
        forget(w);
      }
      break;
    }
    usleep(1000);
  }
  // The groups the module asked removed as it detached: gone before the control plane removes the run's own.
  if (cgroup_work_) {
    cgroup_work_->drain();
    take_cgroup_failures();
  }
  if (chain_ends_ && chain_ends_->any_kernel_exit()) {
    // The exit links' last frames: taken until none has come for 5 ms (the accounting counts what never came as lost).
    uint64_t quiet_since = rte_get_tsc_cycles();
    while (rte_get_tsc_cycles() - quiet_since < static_cast<uint64_t>(0.005 * hz_)) {
      if (sink_->poll() > 0) quiet_since = rte_get_tsc_cycles();
    }
  }
}

int Run::execute() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  SpecErrors errors = check_deployment(d_);
  if (!errors.empty()) {
    for (const SpecError& e : errors)
      emit(events_, {{"event", "spec_error"}, {"path", e.path}, {"message", e.message}});
    return kExitBadSpec;
  }
  const SchedulerType& type = scheduler_types().at(d_.scheduler.name);
  scheduler_ = type.create(d_.scheduler.options);
  d_.workers = scheduler_->plan_workers(d_);
  // Room for every index the stats zone has: a service's added chains append to these, and what refers to an
  // element (the generator's streams, the sink's paths, the modules' views) must stay where it is.
  d_.nfs.reserve(kLifetimeNfs);
  d_.rings.reserve(kLifetimeRings);
  d_.chains.reserve(kLifetimeChains);
  d_.workers.reserve(kLifetimeWorkers);
  lost_at_crash_.assign(d_.nfs.size(), 0);
  bool ran = false;
  try {
    set_up_memory();
    reclaim_ = std::make_unique<NfObjectReclaim>(
        [stats = stats_](int nf) { return flag_load(stats->nf_control[nf].args_wanted); });
    start_workers();
    ran = true;
    control_loop();
    if (error_.empty()) probe_after_traffic();
  } catch (const PortOpenError& e) {
    // The spec named a device this machine cannot open: the user's to fix, as any spec error.
    emit(events_, {{"event", "spec_error"}, {"path", e.field}, {"message", e.reason}});
    fail(e.what());
  } catch (const std::exception& e) {
    fail(e.what());
  }
  // Before any worker is told to stop: a free under way, or one begun as they exit, would wait for them (EAL's IPC).
  if (reclaim_) reclaim_report_ = reclaim_->report();
  reclaim_.reset();
  stop_workers();
  follow_port_work(seconds_since_go(rte_get_tsc_cycles()), true);  // a port opening or closing: done, answered
  if (chain_ends_) chain_ends_->close_ports();  // the mbufs they held back in the pool before it is counted
  if (ran) {
    json out = results();
    std::string path = d_.paths.run_dir + "/results.json";
    std::ofstream(path) << out.dump(2);
    emit(events_, {{"event", "done"}, {"results", path}});
  }
  // A worker killed while detaching may hold DPDK's shared memory lock forever; cleaning up would then wait
  // for it forever. The control plane removes the run's hugepage files and runtime directory either way.
  // The chains' DPDK ports go before the EAL does (their kernel sockets and rings).
  chain_ends_.reset();
  int exit_code = interrupted_ ? kExitInterrupted : error_.empty() ? kExitOk : kExitRunFailed;
  if (!killed_workers_) bounded_eal_cleanup(kEalCleanupSeconds, exit_code);
  return exit_code;
}

int run_deployment(const json& doc, FILE* events, int commands_fd) {
  Deployment deployment;
  try {
    deployment = parse_deployment(doc);
  } catch (const std::exception& e) {
    emit(events,
         {{"event", "spec_error"}, {"path", ""}, {"message", std::string("malformed run description: ") + e.what()}});
    return kExitBadSpec;
  }
  Run run(std::move(deployment), doc, events, commands_fd);
  return run.execute();
}

}  // namespace tandem
