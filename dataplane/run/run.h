// One run of a deployment in the manager: the state it holds, and its parts, each in a file of its own:
// lifecycle (run_lifecycle.cc: memory, workers started and stopped, the steps in order), supervision
// (run_supervision.cc: crashed and hung workers), the control loop (run_control_loop.cc), and accounting and
// results (run_results.cc).
#pragma once

#include <sys/types.h>

#include <csignal>
#include <cstdio>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <rte_mempool.h>
#include <rte_ring.h>

#include "attach_clock.h"
#include "autoscaler.h"
#include "beside_traffic_start.h"
#include "chain_ends.h"
#include "change_watch.h"
#include "contract/deployment.h"
#include "contract/hop_trace.h"
#include "contract/shm_layout.h"
#include "dataplane/observation/os_counters.h"
#include "dataplane/observation/probe.h"
#include "dataplane/sink/sink.h"
#include "dataplane/traffic/generator.h"
#include "external_nf.h"
#include "kernel_link_count.h"
#include "nf_object_reclaim.h"
#include "nf_reports.h"
#include "schedulers/scheduler.h"
#include "worker_launcher.h"

namespace tandem {

// A worker that finishes no loop iteration for this long is hung (or starved, if its scheduler gives it no CPU).
// The longest legitimate iteration is one burst of the costliest NF: 1024 packets x 1e6 cycles is < 0.5 s.
inline constexpr double kHangSeconds = 0.75;

// Set by SIGINT and SIGTERM: the control loop ends the run, cleanly, when it sees it.
extern volatile std::sig_atomic_t g_interrupted;

// Writes one event, a JSON line, to the control plane.
void emit(FILE* events, const json& event);

// Counters at one instant, to difference over the measurement window.
struct Snapshot {
  double tsc_seconds = 0;
  std::vector<uint64_t> generated, delivered, delivered_bytes;
  std::vector<uint64_t> wasted, entry_backpressure;  // per chain: drops after NF work, drops at the entry
  std::vector<uint64_t> fell_behind;                 // per chain: packets due that the generator gave up
  std::vector<NfCounters> nfs;
  std::vector<OsSample> os;  // per worker
};

// Each ring's full-ring drop count at one instant, by ring index: a live change's drops are told by ring.
using RingDrops = std::vector<uint64_t>;

struct WorkerState {
  pid_t pid = 0;
  bool exited = false;
  std::string exit_description;
  uint64_t last_heartbeat = 0;
  double heartbeat_changed_s = 0;
  // Its /proc counters when a check first found the heartbeat as it was (what a hang's CPU use is measured from).
  std::optional<OsSample> at_heartbeat_still;
  bool starvation_reported = false;
  bool hung = false;      // declared hung: it will not stop by itself
  bool removed = false;   // its chain was removed: told to leave, its exit expected (run_chain_removal.cc)
  double attach_ms = -1;  // from its launch until it attached; -1 until then
};

// A live change's refusal, as the `change` event answers it: the command's id and op, the field and why.
json change_refusal(const json& command, const std::string& field, const std::string& message);
// The same for a command that adds `what` ("chain", "port"): the answer names it, as the applied one does.
// A removal's refusal (of a chain, a port), naming what was to go under `what`.
json removal_refusal(const json& command, const char* what, const std::string& message);
json addition_refusal(const json& command, const char* what, const std::string& field, const std::string& message);
// A ring of the deployment in shared memory, named as the workers look it up; null with rte_errno set.
rte_ring* make_ring(const RingConfig& config);
// Names `config`'s ring where a chain refused before left a ring of its index's name (RingConfig::object).
void name_left_ring_apart(RingConfig& config);
// The names of the NFs worker `worker` runs, comma-separated.
std::string worker_nf_names(const Deployment& deployment, int worker);

class Run {
 public:
  // `commands_fd`: a service's live changes, JSON lines (run_live_changes.cc); -1 for a run that takes none.
  Run(Deployment deployment, json original, FILE* events, int commands_fd = -1)
      : d_(std::move(deployment)), original_(std::move(original)), events_(events), commands_fd_(commands_fd) {}
  int execute();

 private:
  void set_up_memory();
  void start_workers();
  // Where the workers read the deployment (their plans, the NFs' arguments as the last live change left them).
  std::string deployment_path() const { return d_.paths.run_dir + "/deployment.json"; }
  // Writes the run's deployment there; returns the path.
  std::string write_deployment() const;
  // The next worker's process (a Tandem worker, or an external application) started from `plan` and attached;
  // returns its index. One at a time: start_workers says why.
  size_t launch_attached(const WorkerPlan& plan, const std::string& deployment_path);
  // A Tandem worker's process for `plan` of `deployment` (launch_worker), watched by reclaim_; returns its pid.
  pid_t launch_tandem_worker(const Deployment& deployment, const WorkerPlan& plan, const std::string& deployment_path,
                             WorkerStart start = {});
  // Whether no process is told to exit or stopped now: reclaim_ frees only then.
  bool quiet_for_reclaim() const { return !relayout_ && !addition_ && removals_.empty(); }
  // Until worker `w`, launched at `launched_tsc`, is attached and waiting for `go` (its attach_ms recorded then);
  // throws, naming it, if it exits first or is late (AttachClock).
  void wait_until_attached(size_t w, uint64_t launched_tsc);
  // Says, once a wait that began at `since_tsc` has lasted a second and at most once a second, that the loop waits on
  // something bounded (a worker attaching, old ones leaving): the control plane's watchdog takes 10 s without an
  // event for a stuck loop, and a re-layout of many NFs, or one on a slow host, waits longer between two turns.
  void say_still_waiting(const char* on, uint64_t since_tsc);
  void control_loop();
  void check_workers(double now_s, bool check_hangs);
  // Packets of a chain that an NF processed and a full ring further down then dropped: wasted work.
  uint64_t wasted_work(int chain) const;
  void fail(const std::string& message, const std::string& nf = "");
  void stop_workers();
  void stop_externals_one_by_one();
  // Kernel links, while the workers stop: once every kernel-I/O worker sends no more, tells their receivers to
  // count their sockets; the sink takes what reaches the exit links meanwhile. Called until the workers exited.
  void settle_kernel_links();
  void probe_after_traffic();
  bool probe_finished() const;
  void catch_up_ring_counters();
  // At the end: what a restarted kernel-I/O sender's dead process sent and did not count, which its receiver counted,
  // is moved from the NF's losses at the crash to the link's sends.
  void settle_restarted_senders();
  Snapshot snapshot(double now_s);
  json results();
  // Every counter now, cumulative, for the control plane's live metrics (live_metrics.cc).
  json live_metrics();
  json profile_results() const;
  // The running scheduler as the results and a switch's answer (`before`) give it: its name, options and report.
  json scheduler_entry() const {
    return {{"name", d_.scheduler.name}, {"options", d_.scheduler.options}, {"report", scheduler_->report(*view_)}};
  }
  double seconds_since_go(uint64_t tsc) const { return static_cast<double>(tsc - go_tsc_) / hz_; }
  std::string nf_names_of(int worker) const { return worker_nf_names(d_, worker); }
  // Worker w as the `started` event and an added chain's answer list it: name, pid, core, NFs.
  json worker_entry(size_t w) const;
  // Starts `external`'s application with lcore ids of its own (see ExternalNf::launch). Throws where none are left.
  pid_t launch_external(ExternalNf& external, bool on_control_core = false);
  // Worker w has exited: neither it nor its task may be signalled or scheduled any more.
  void forget(size_t w) { pids_[w] = task_ids_[w] = 0; }
  // True once worker w has exited (reaped now or before); records how it ended and forgets it.
  bool reap(size_t w);
  void mirror_external_counters();
  // Live changes (run_live_changes.cc): read between the control loop's turns, answered by `change` events.
  struct PendingChange {
    json id;
    std::string op, nf;
    std::vector<int> nfs;  // the NF and its scaled instances
    uint32_t generation;
    json args;
    bool stateful;
    double requested_s;
    uint64_t requested_tsc;
    RingDrops ring_drops_before;
  };
  struct PendingScale {
    json id;
    std::string nf;
    uint32_t instances, before;
    double requested_s;
    uint64_t requested_tsc;
    RingDrops ring_drops_before;
  };
  // A chain being removed (run_chain_removal.cc): its entry closed at `requested_s`, its processes told to leave
  // once it drained (`left_at_s`), answered once they are all reaped.
  struct ChainRemoval {
    json id;
    int chain;
    std::vector<size_t> workers;
    double requested_s;
    uint64_t requested_tsc;
    RingDrops ring_drops_before;
    uint64_t generated = 0;  // packets that entered it, all of them
    double left_at_s = -1;
    bool drained = false;
    bool out_of_sight = false;  // its workers run under the kernel's scheduler, the module's successor blind to them
    uint64_t cgroups_released = 0;  // the cgroup work queue's ticket for the module's release (hand_to_the_kernel)
    uint64_t kernel_received = 0;   // what its kernel links' receivers took, when it last moved (chain_drained)
    double kernel_moved_at_s = 0;
  };
  void remove_chain(const json& command, double now_s);
  // Asks a removed chain's application (worker `w`) to exit, unless another is exiting: whether `w` is the one that
  // is (external_exiting_ says since when).
  bool ask_external_to_exit(size_t w, double now_s);
  // A chain added (run_chain_addition.cc): checked against the running deployment, its rings made and its
  // processes started one by one, then joined to the run in one step; answered then, or refused with no trace.
  struct ChainAddition {
    json id;
    json chain_config;             // as the control plane sent it
    Deployment next;               // the running deployment with the chain, planned
    std::vector<rte_ring*> rings;  // its rings, made
    size_t first_worker = 0;       // its workers' indices start here
    std::vector<pid_t> pids;       // its workers launched so far (0: reaped)
    // Per launched worker: its external application (null for a Tandem worker), stopped (SIGSTOP) once it
    // forwards, until the chain joins.
    std::vector<std::unique_ptr<ExternalNf>> externals;
    std::optional<BesideTrafficStart> starting;  // the last launched worker's start
    bool started = false;                        // every worker attached
    // Refused (why): its workers told to leave, reaped as they exit while the loop goes on, then the refusal answered.
    std::optional<std::string> giving_up;
    uint64_t give_up_deadline_tsc = 0;  // a worker not gone by then is killed
    double requested_s = 0;
    uint64_t requested_tsc = 0;
    RingDrops ring_drops_before;
  };
  void add_chain(const json& command, double now_s);
  // A port added to a running service: its device opened beside the running ones, for chains added after it
  // (run_port_addition.cc).
  void add_port(const json& command, double now_s);
  // A port's device being opened (add_port) or closed (remove_port) on a thread of its own, while the loop goes on;
  // one at a time.
  struct PortWork {
    json command;
    std::string name;
    double requested_s = 0;
    uint64_t begin_tsc = 0;
    RingDrops ring_drops_before;
    std::future<std::unique_ptr<EthdevPort>> opened;  // add_port: the device, open (or its PortOpenError)
    PortConfig config;                                // add_port: the port
    std::future<void> closed;                         // remove_port
    EthdevPort* port = nullptr;                       // remove_port: the port closing
  };
  // Answers the port work once its thread is done (at once with `wait`: the run is ending).
  void follow_port_work(double now_s, bool wait = false);
  void port_opened(double now_s);
  // The answer to a port work done: what every port change says (its time, the ring drops meanwhile).
  json port_work_reply(const PortWork& work, double now_s) const;
  void port_closed(double now_s);
  // A port removed from a running service once no chain uses it: closed, its report kept (run_port_removal.cc).
  void remove_port(const json& command, double now_s);
  // Why port `port` cannot be removed now ("" if it can).
  std::string why_port_cannot_go(int port) const;
  // Why no chain can be added now ("" if one can).
  std::string why_no_chain_can_come() const;
  // Why the chain `next` ends with cannot run beside the running ones: {field, why}, why "" if it can. Plans
  // `next`'s workers.
  std::pair<std::string, std::string> why_chain_cannot_come(Deployment& next) const;
  void follow_addition(double now_s);
  // Starts the added chain's worker `plan` (its application, for an external NF); returns its pid.
  pid_t launch_added_worker(ChainAddition& addition, const WorkerPlan& plan);
  // True once the added chain's k-th worker attached (an application: forwards, then stopped until the join).
  bool added_worker_attached(ChainAddition& addition, size_t k);
  // Refuses the chain being added: its workers told to leave (or killed, still starting); answered once they are gone.
  void give_up_addition(const std::string& why);
  // True once the refused chain's workers are gone, its rings freed where nothing else holds them, and the refusal
  // answered; none is waited for.
  bool finish_giving_up();
  void join_added_chain(double now_s);
  void refuse_unfinished_addition();
  void follow_removals(double now_s);
  // Why chain `chain` cannot be removed now ("" if it can).
  std::string why_chain_cannot_go(int chain) const;
  bool chain_drained(ChainRemoval& removal, double now_s) const;
  // Whether all that entered the chain left it by the counters that say so (delivered; dropped in a full ring, by an
  // NF, at a label miss, at a crash or by its entry's backpressure; merged). Each counts a packet as it leaves, never
  // before, so a sum read counter by counter reaches what entered only once nothing is inside. The rings' dequeue
  // counters that held_by_segment reads run behind the rings (a worker counts a batch after taking it): an empty
  // ring and a segment holding nothing by them were once both seen while a preempted worker held a batch it had not
  // counted, which it passed on after the next NF had left (16 packets stayed in a removed chain's ring).
  bool all_left(int chain) const;
  // Whether the chain's rings are empty and a worker of it that the module holds holds packets: a module that
  // decides by ring occupancy (UNiS) never gives that worker a turn again.
  bool parked_with_packets(const ChainRemoval& removal) const;
  void hand_to_the_kernel(ChainRemoval& removal);
  // A fresh scheduler module attached to the workers there are now (after restarts or a chain's removal), once
  // the module is away and no restart still needs it so.
  bool may_reattach() const { return !attached_ && !restart_pending() && !released_for_drain_ && !relayout_; }
  void reattach_scheduler();
  // The module lets go of every worker (restart, chain added or removed, probes, the drain's release); nothing if
  // it holds none.
  void detach_scheduler();
  // What the cgroup work queue could not do, as warnings and events.
  void take_cgroup_failures();
  void open_commands(int fd);
  void take_commands(double now_s);
  void follow_changes(double now_s);
  void change_args(const json& command, double now_s);
  // Arguments asked for an NF whose previous change is still being built wait their turn, so each generation is
  // built, swapped in and answered in the order asked (none overtaken unanswered by the next).
  void start_waiting_args();
  // Changes still building or waiting when the traffic ends: answered refused, so no request is left without one.
  void refuse_unfinished_changes();
  void switch_scheduler(const json& command, double now_s);
  // A scheduler that lays the NFs out in other worker processes (coop's one per NF, rtc's one per core, Bubble's
  // user-level threads), switched to live (run_relayout.cc): the entries held, the NFs drained, the old processes
  // gone and the new ones started on the same rings and counters, the entries let go.
  struct Relayout {
    json command;
    std::string name;  // the scheduler switched to
    json options, before;
    std::unique_ptr<Scheduler> next;  // null: the running module asked (it plans the workers once they drained)
    std::vector<WorkerPlan> plan;     // its workers, indexed from 0
    double requested_s = 0;
    uint64_t requested_tsc = 0;
    RingDrops ring_drops_before;
    // When the entries were held: before it, the old layout carried the traffic as ever (its overload's drops, and
    // what the staged processes' start cost it); after it, the switch itself.
    RingDrops ring_drops_at_hold;
    int restarts = 0;  // times the old layout was started again to finish the drain
    // What had moved through the chains, and each worker's loop turns, when the drain first looked settled.
    struct Quiet {
      uint64_t moved;
      std::vector<uint64_t> turns;
    };
    std::optional<Quiet> quiet;
    std::string field = "scheduler";  // what a refusal names
    // A move (run_nf_move.cc): NF `moved_nf` goes from core `moved_from` to `moved_to` once the NFs drained.
    int moved_nf = -1, moved_from = -1, moved_to = -1;
    // The new layout's processes started beside the running ones before the entries are held
    // (run_relayout_staging.cc), each waiting in a spare slot of the stats zone: by the new plan's worker index.
    struct Staged {
      pid_t pid = 0;
      int slot = -1;
      double attach_ms = -1;
    };
    std::map<int, Staged> staged;
    bool staging = false;                        // still starting them: the entries not held yet
    std::optional<BesideTrafficStart> starting;  // the last one started
    uint64_t next_staging_look_tsc = 0;
    double held_s = 0;  // the entries held (the drain's clock starts)
    uint64_t held_tsc = 0;
  };
  // Why the workers cannot be re-laid out now ("" if they can).
  std::string why_no_relayout() const;
  // The workers `next` lays the running NFs out in (as `d` places them; the run's deployment by default): those of
  // removed chains left out, indexed from 0.
  std::vector<WorkerPlan> relayout_plan(const Scheduler& next) const { return relayout_plan(next, d_); }
  std::vector<WorkerPlan> relayout_plan(const Scheduler& next, const Deployment& d) const;
  std::vector<WorkerPlan> without_removed_chains(const std::vector<WorkerPlan>& planned, const Deployment& d) const;
  // An NF moved to another core (run_nf_move.cc): a re-layout by a fresh module of the running
  // scheduler, the NF placed on that core.
  void move_nf(const json& command, double now_s);
  // What a scheduler needs of the machine beyond what the run prepared for it, as a refusal's message ("" if none).
  std::string unprepared_need(const SchedulerType& type, const Deployment& trial) const;
  // A switch of one core's module (set_scheduler with scheduler.core): `name` and `options` become the run's
  // scheduler with that core switched (per_core, or one module for all). The field and why, where it cannot be.
  std::pair<std::string, std::string> switch_one_core(const json& core, std::string& name, json& options) const;
  void start_relayout(Relayout relayout);
  // The module asked for another layout (Scheduler::wants_relayout): the same steps, the module kept.
  void relayout_for_module(double now_s);
  // The entries let go and the module attached again as before (a switch asked for answered refused, with `why`).
  void end_relayout_unchanged(const std::string& why);
  // Once the NFs drained: the old workers leave, the new ones start; refused, with nothing changed, if they do not
  // drain in time. Answered either way.
  void follow_relayout(double now_s);
  void replace_workers();
  // Whether the drain, looking done, is: every worker ran a loop's turn since and no packet moved.
  bool drain_settled();
  // The running workers told to leave their loops and reaped (killed after 5 s).
  void retire_workers();
  // The reports d_.workers' ended processes wrote, kept (nf_reports_): an NF's earlier ones that ended `ended`
  // at `at_s`, or its last (`ended` empty; a removed chain's NFs' always).
  void collect_nf_reports(const std::string& ended, double at_s);
  // d_.workers' processes started one by one on the run's rings and counters (those `staged` beside the old ones
  // told to go on); their `started` entries.
  json launch_planned_workers(std::map<int, Relayout::Staged>* staged = nullptr);
  // run_relayout_staging.cc: the new layout's processes started beside the running ones, one at a time, while the
  // traffic flows; the entries held once every one attached. A module's own re-layout whose workers it cannot tell
  // before the NFs drained (Scheduler::planned_relayout) starts them then.
  bool may_stage(const Relayout& relayout) const;
  void start_staging();
  void follow_staging();
  // The staged processes, attached and asleep: each moved to its core and told to go on as its plan's worker, which
  // it then is (its own slot; the spare one cleared).
  void promote_staged(std::map<int, Relayout::Staged>& staged);
  // The staged processes dismissed (a refused switch, the run's end): told to exit, killed where still starting.
  void dismiss_staged(Relayout& relayout);
  void hold_entries_for_relayout();
  // Whether work of the control core's runs beside the traffic under SCHED_IDLE, for which the loop naps: a worker
  // starting (a re-layout's, an added chain's), or a live change's build (dataplane/runtimes/live_args.h).
  bool idle_work_beside_traffic(double now_s) const;
  std::string staged_deployment_path() const;
  // A run-to-completion segment passes packets between its NFs past the rings between them: once it drained, those
  // rings' counters are brought to what passed, so that each NF alone, as the next layout may run it, holds nothing.
  void count_passages_past_inner_rings();
  void refuse_unfinished_relayout();
  // A scaled NF's instance count set by command (the autoscaler's mechanism), or given back to its rule.
  void change_instances(const json& command, double now_s);
  void answer_change(json reply);
  // A change that took effect: answered now, its cost to the traffic measured once its window has passed.
  void answer_applied(json reply, uint64_t requested_tsc);
  void watch_changes(uint64_t now_tsc);
  uint64_t ring_drops_now() const;
  // Each ring's full-ring drops now; what a live change's answer says of them since its request: the total, and by
  // ring those that dropped (a ring made after `before` counts from nothing).
  RingDrops ring_drops_each() const;
  RingDrops ring_drops_since_each(const RingDrops& before) const;
  uint64_t ring_drops_since(const RingDrops& before) const;
  json ring_drops_by_ring_since(const RingDrops& before) const;
  // The worker whose plan runs an NF, and the first NF of its segment there.
  struct NfPlace {
    int worker, segment_head;
  };
  NfPlace place_of_nf(int nf) const;
  // Restarts (run_restarts.cc): a dead worker whose NFs' policy allows it is started again after a back-off.
  struct RestartState {
    std::vector<double> times;  // of its crashes within the window
    double restart_at_s = -1;   // when to start it again; -1: not waiting
    double crashed_at_s = 0;
    std::string how;
    uint64_t lost = 0;  // packets it held at its crash
    // An external application's: what its dead process received and did not send (held, or freed on a full ring).
    std::optional<uint64_t> held_or_freed;
  };
  std::string why_not_restartable(size_t w) const;
  // True if the crash of worker w is handled by a restart (or by giving up, which fails the run).
  bool schedule_restart(size_t w, double now_s);
  // A kernel link's receiver died, to be started again: what its dead process took set apart, its socket's counts
  // (gone with it) zeroed for the next process's, and its receive buffers (mbufs it alone knew) counted out.
  void forget_dead_receiver(int link);
  const ReceiverRestarts& receiver_restarts(int link) const;
  void relaunch_due(double now_s);
  bool restart_pending() const;
  void neutral_hints();
  // The counter of one ring end brought up to the ring's tail: operations a killed worker did not live to count.
  void catch_up_ring(int ring, bool producer);
  // Packets a segment's process holds between dequeue and hand-off, from the counters.
  int64_t held_by_segment(const Segment& segment) const;
  // What the dead processes of a segment's NFs held, lost (by each NF's name: a crash under an earlier layout of the
  // workers, run_relayout.cc, may have been another NF's than the segment's first).
  int64_t lost_in_segment(const Segment& segment) const;
  // Mbufs that the counters say are out of the pool; the pool's in-use count must match it.
  uint64_t mbufs_accounted_for() const;
  // At the run's end: what a restarted external NF's dead processes received and did not send were held at their
  // deaths (lost) or freed on a full ring (that ring's drops); only the pool tells how many of each. Returns the
  // NF's name when the pool told them apart (and so cannot check the run).
  std::optional<std::string> split_external_crash_losses();
  // A live worker whose NF holds packets between taking and handing them on (the drain waits for it).
  std::optional<size_t> worker_holding_packets() const;
  json external_report(int nf) const;

  Deployment d_;
  json original_;
  FILE* events_;
  double hz_ = 0;
  uint64_t last_waiting_event_tsc_ = 0;  // say_still_waiting's last event
  uint64_t go_tsc_ = 0;
  rte_mempool* pool_ = nullptr;
  StatsZone* stats_ = nullptr;
  std::vector<rte_ring*> rings_;
  // Where scheduler modules make, fill and remove cgroups away from the loop; before the module, which posts to it
  // as it is destroyed.
  std::unique_ptr<CgroupWorkQueue> cgroup_work_;
  std::unique_ptr<Scheduler> scheduler_;
  std::vector<pid_t> pids_;  // worker processes, or external NFs' applications
  // What schedulers switch and /proc is read for: the worker process, or an external NF's forwarding thread.
  std::vector<pid_t> task_ids_;
  std::vector<std::unique_ptr<ExternalNf>> externals_;  // by worker; null for Tandem workers
  // External applications' lcores (main and forwarding), counted down from the top (launch_external).
  int next_external_lcore_ = RTE_MAX_LCORE - 1;
  std::vector<WorkerState> workers_;
  std::unique_ptr<ChainEnds> chain_ends_;  // before the generator and sink, which send and take through its ports
  std::unique_ptr<Generator> generator_;
  std::unique_ptr<Sink> sink_;
  std::map<std::string, std::unique_ptr<Probe>> probes_;  // by name, from the run's `profile`
  bool probes_drive_traffic_ = false;  // a probe sends the packets (the cycle estimator): no paced traffic
  std::unique_ptr<ProbeView> probe_view_;
  std::unique_ptr<SchedulerView> view_;
  std::unique_ptr<Autoscaler> autoscaler_;    // scaled NFs' instance counts (μNF's auto-scaling); empty without any
  std::unique_ptr<NfObjectReclaim> reclaim_;  // gone and replaced NF instances' hugepage objects freed; until the stop
  json reclaim_report_;                       // what it freed, read as it stopped
  Snapshot window_begin_, window_end_;
  bool window_begun_ = false, window_ended_ = false;
  std::vector<OsSample> os_at_failure_;  // the workers' OS counters when a run failed, before they were stopped
  uint64_t ring_counts_caught_up_ = 0;   // ring operations a killed worker did not live to count
  uint64_t kernel_sends_caught_up_ = 0;  // frames a killed worker sent into a kernel link and did not live to count
  std::string error_, failed_nf_;
  bool interrupted_ = false;
  bool attached_ = false;
  // The drain's last resort: the module let go of the workers because one it parked held packets and nothing else
  // would run it (its input is empty for good); it stays away until the run ends.
  bool released_for_drain_ = false;
  bool killed_workers_ = false;
  std::vector<std::string> warnings_;
  int commands_fd_ = -1;
  std::string commands_pending_;  // what arrived past the last complete command line
  std::vector<PendingChange> pending_changes_;
  std::vector<PendingScale> pending_scales_;  // instance counts asked for that the scaled egresses have not made yet
  std::vector<ChainRemoval> removals_;        // chains being removed
  std::optional<ChainAddition> addition_;     // a chain being added (one at a time)
  std::optional<Relayout> relayout_;          // the workers being re-laid out (a scheduler switch)
  std::vector<bool> chain_removed_;           // per chain: removed from the service
  std::set<int> ports_removed_;               // by PortConfig::index: removed from the service
  std::optional<PortWork> port_work_;         // a port being opened or closed
  // A removed chain's application asked to exit (its worker), and when.
  std::optional<std::pair<size_t, double>> external_exiting_;
  std::deque<std::pair<json, double>> waiting_args_;  // set_args commands and when they came, behind one pending
  json changes_ = json::array();                      // every change answered, for the results
  std::vector<uint32_t> args_generation_;             // per NF: the last generation of arguments asked for
  // Per NF: the oldest generation whose arguments file is kept (a restart reads the running one's; older ones go
  // once every instance runs a newer one, so that a service's run directory does not grow with its changes).
  std::map<int, uint32_t> args_files_from_;
  json provided_requirements_;       // what the run prepared the machine for: a switched-to module must fit in it
  bool scheduler_switched_ = false;  // the control loop reads the new module's tick period
  std::unique_ptr<ChangeWatch> change_watch_;       // a service's: what each change cost the traffic
  std::map<size_t, RestartState> restart_state_;    // by worker
  std::map<size_t, std::string> restart_refusals_;  // by worker: why one its spec asked for could not be
  std::vector<uint64_t> lost_at_crash_;             // per segment-first NF: packets its dead processes held
  NfReports nf_reports_;  // what the NFs counted themselves, kept across their processes and instances
  // Kernel links (by ring index) whose receiving NF restarted (what its dead processes took), and whose sending NF
  // restarted (the NF: a frame its dead process sent and did not count is found only at the end, when the receiver
  // counted it, and then it was not lost at the crash).
  std::map<int, ReceiverRestarts> restarted_receivers_;
  std::map<int, std::pair<int, size_t>> restarted_senders_;  // link -> (its sending segment's first NF, worker)
  uint64_t dead_receive_buffers_ = 0;  // mbufs a restarted kernel-I/O receiver's dead processes held for their sockets
  json restarts_ = json::array();
};

}  // namespace tandem
