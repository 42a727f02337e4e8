// unis: the UNiS scheduler module (Sec. 4): watches ring occupancy, runs Algorithm 1 per shared core on the
// control core, and switches unmodified NF processes with a process controller. It never asks an NF anything.
#include <rte_cycles.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "interface_monitor.h"
#include "schedulers/chain_order.h"
#include "schedulers/mechanisms/process_controller.h"
#include "schedulers/run_to_completion_plan.h"
#include "schedulers/scheduler.h"
#include "wait_queue.h"

namespace tandem::unis {
namespace {

struct Options {
  double gamma;
  double slice_fraction;  // of capacity(egress) x cost; the paper uses gamma
  int theta_min;          // -1: burst - 8
  int theta_max;          // -1: gamma x capacity(egress)
  double interval_us;
  bool occupancy;
  std::string sampling;
  std::string slice_start;
  std::string backend;
  double idle_handover_us;  // < 0: never
  double residue_wait_us;   // < 0: never

  static Options from(const json& o) {
    double gamma = o["gamma"].get<double>();
    double fraction = o["slice_fraction"].get<double>();
    return {gamma,
            fraction > 0 ? fraction : gamma,
            o["theta_min"].get<int>(),
            o["theta_max"].get<int>(),
            o["interval_us"].get<double>(),
            o["occupancy"].get<bool>(),
            o["sampling"].get<std::string>(),
            o["slice_start"].get<std::string>(),
            o["backend"].get<std::string>(),
            o["idle_handover_us"].get<double>(),
            o["residue_wait_us"].get<double>()};
  }
  uint32_t theta_min_for(const Deployment& d) const {
    return theta_min >= 0 ? static_cast<uint32_t>(theta_min) : default_theta_min(d.burst);
  }
  uint32_t theta_max_for(uint32_t capacity) const {
    return theta_max >= 0 ? static_cast<uint32_t>(theta_max) : default_theta_max(gamma, capacity);
  }
};

class UnisScheduler final : public Scheduler {
 public:
  // `group_native`: hybrid: the native NFs of a core run to completion in one worker, which UNiS switches against
  // the core's external processes as it would one NF.
  UnisScheduler(Options options, bool group_native)
      : options_(std::move(options)),
        every_interval_(options_.sampling == "every_interval"),
        group_native_(group_native) {}

  std::vector<WorkerPlan> plan_workers(const Deployment& d) const override {
    if (!group_native_) return one_worker_per_nf(d);
    std::vector<WorkerPlan> plans = run_to_completion_workers(
        d, [](const NfConfig& nf) { return !nf.external(); }, "native@core");
    for (const WorkerPlan& plan : one_worker_per_nf(d)) {
      if (!d.nfs[plan.segments.front().nfs.front()].external()) continue;
      WorkerPlan external = plan;
      external.index = static_cast<int>(plans.size());
      external.lcore_id = external.index + 1;
      plans.push_back(external);
    }
    return plans;
  }

  void attach(SchedulerView& view) override {
    const Deployment& d = view.deployment;
    double hz = static_cast<double>(rte_get_tsc_hz());
    worker_of_nf_.assign(d.nfs.size(), -1);
    for (const WorkerPlan& plan : d.workers)
      for (const Segment& segment : plan.segments)
        for (int nf : segment.nfs) worker_of_nf_[nf] = plan.index;
    // What UNiS switches is a worker process: one NF, or (hybrid) a core's native NFs. Its input is what its segments
    // take from outside it, its output what they give outside it; in a line of one-NF workers each is one ring,
    // shared by neighbours as in the paper.
    std::vector<Interface> interfaces;
    std::map<std::pair<std::vector<int>, bool>, int> known;
    auto interface_of = [&](const std::vector<int>& rings, bool fullest) {
      std::pair<std::vector<int>, bool> key{rings, rings.size() > 1 && fullest};
      auto [found, added] = known.emplace(key, static_cast<int>(interfaces.size()));
      if (added) interfaces.push_back({key.first, key.second});
      return found->second;
    };
    auto outside = [&](int nf, int worker) { return nf < 0 || worker_of_nf_[nf] != worker; };
    std::vector<std::pair<int, int>> sides(d.workers.size());  // per worker: its ingress and egress interface
    for (const WorkerPlan& plan : d.workers) {
      std::vector<int> in, out;
      for (const Segment& segment : plan.segments) {
        for (int ring : segment.in_rings)
          if (outside(d.rings[ring].from, plan.index)) in.push_back(ring);
        for (int ring : segment.out_rings)
          if (outside(d.rings[ring].to, plan.index)) out.push_back(ring);
      }
      sides[plan.index] = {interface_of(in, false), interface_of(out, true)};
    }
    monitor_ = std::make_unique<InterfaceMonitor>(view.rings(), std::move(interfaces),
                                                  static_cast<uint64_t>(options_.interval_us * 1e-6 * hz));
    controller_ = make_process_controller(options_.backend, d.paths.cgroup_dir, view.cgroup_work());
    held_.assign(d.workers.size(), true);

    std::set<int> cores = nf_cores(d);
    for (const NfConfig& nf : d.nfs)
      if (!(nf.cost_cycles >
            0))  // the control plane fills costs in (the cycle_costs resource): this is a bug, not bad input
        throw std::runtime_error("unis has no cycle estimate for NF " + nf.name);
    for (int core : cores) {
      // Each worker where its first NF comes in the chain order; it stands for the worker in the wait queue.
      std::vector<ScheduledNf> queue;
      std::set<int> queued;
      for (int nf : chain_order_on_core(d, core)) {
        int worker = worker_of_nf_[nf];
        if (!queued.insert(worker).second) continue;
        auto [ingress, egress] = sides[worker];
        uint32_t capacity = monitor_->capacity(egress);
        // A packet crosses one segment of the worker: the cheapest one is how fast its rings can move (when to look
        // again); all of them together, how long a turn may take to move a ring's worth through each.
        double cheapest_segment = 0, all = 0;
        for (const Segment& segment : d.workers[worker].segments) {
          double cost = 0;
          for (int member : segment.nfs) cost += d.nfs[member].cost_cycles;
          cheapest_segment = cheapest_segment > 0 ? std::min(cheapest_segment, cost) : cost;
          all += cost;
        }
        queue.push_back({.nf = nf,
                         .worker = worker,
                         .ingress = ingress,
                         .egress = egress,
                         .slice_cycles = time_slice_cycles(all, options_.slice_fraction, capacity),
                         .theta_min = options_.theta_min_for(d),
                         .theta_max = options_.theta_max_for(capacity),
                         .cost_cycles = cheapest_segment});
      }
      cores_.emplace_back(
          core, CoreQueue(std::move(queue), options_.occupancy,
                          options_.slice_start == "decision" ? SliceStart::kDecision : SliceStart::kFirstProgress,
                          options_.idle_handover_us < 0 ? CoreQueue::kNever
                                                        : static_cast<uint64_t>(options_.idle_handover_us * 1e-6 * hz),
                          options_.residue_wait_us < 0 ? CoreQueue::kNever
                                                       : static_cast<uint64_t>(options_.residue_wait_us * 1e-6 * hz)));
    }
    interval_cycles_ = static_cast<uint64_t>(options_.interval_us * 1e-6 * hz);
    next_check_.assign(cores_.size(), 0);
    // Park everyone first, then let the head of each wait queue run (Algorithm 1, before line 3).
    for (pid_t pid : view.worker_pids()) controller_->adopt(pid);
    uint64_t now = rte_get_tsc_cycles();
    monitor_->sample();
    for (auto& [core, queue] : cores_) {
      const ScheduledNf& first = queue.start(now);
      controller_->activate(view.worker_pids()[first.worker]);
      held_[first.worker] = false;
    }
  }

  // Polled from the manager's loop every iteration; the monitoring timer paces the decisions at T.
  uint64_t tick_period_ns() const override { return 1; }

  void tick(SchedulerView& view, uint64_t now_tsc) override {
    controller_->settle();  // the freezer's groups made off the loop: each task parked or let run as asked last
    const Errand errand = [&](const ScheduledNf& unit) { return on_errand(view, unit); };
    if (every_interval_) {
      if (!monitor_->poll(now_tsc)) return;
      intervals_++;
      for (auto& [core, queue] : cores_) carry_out(view, queue.decide(now_tsc, monitor_->occupancy(), {}, errand));
      return;
    }
    // "predicted": per core, read the running NF's two rings when it could next have to yield; when it must,
    // read each candidate's rings as Algorithm 1 comes to it, the first fit one being its successor.
    for (size_t i = 0; i < cores_.size(); i++) {
      if (now_tsc < next_check_[i]) continue;
      intervals_++;
      CoreQueue& queue = cores_[i].second;
      const ScheduledNf& running = queue.running();
      monitor_->sample(running.ingress);
      monitor_->sample(running.egress);
      queue.observe_turn(now_tsc, monitor_->occupancy());
      if (!queue.must_yield(now_tsc, monitor_->occupancy(), errand)) {
        next_check_[i] = queue.next_check_tsc(now_tsc, monitor_->occupancy(), interval_cycles_);
        continue;
      }
      std::optional<Switch> change = queue.decide(
          now_tsc, monitor_->occupancy(),
          [&](const ScheduledNf& candidate) {
            monitor_->sample(candidate.ingress);
            monitor_->sample(candidate.egress);
          },
          errand);
      carry_out(view, change);
      // After a switch, the new NF's rings were just read; without one, nobody else was worth the core yet.
      next_check_[i] =
          change ? queue.next_check_tsc(now_tsc, monitor_->occupancy(), interval_cycles_) : now_tsc + interval_cycles_;
    }
  }

  // A process with a live change waiting, awake: it takes the change only by running its loop (a spare instance
  // parked on its empty input, which the manager wakes for it, would otherwise never get a turn by occupancy).
  // The change first: its words are written once a change, while the worker's `idle` shares a cache line with the
  // heartbeat it writes every loop, which a read from here would make it take back.
  static bool on_errand(const SchedulerView& view, const ScheduledNf& unit) {
    for (const Segment& segment : view.deployment.workers[unit.worker].segments)
      for (int nf : segment.nfs)
        if (view.live_change_waiting(nf)) return !view.hints.asleep(static_cast<size_t>(unit.worker));
    return false;
  }

  void carry_out(SchedulerView& view, const std::optional<Switch>& change) {
    if (!change) return;
    int from = worker_of_nf_[change->from], to = worker_of_nf_[change->to];
    uint64_t begin = rte_get_tsc_cycles();
    // A worker that exited has pid 0 here (to the kernel, pid 0 would be the manager itself): hand_over skips it.
    controller_->hand_over(view.worker_pids()[from], view.worker_pids()[to]);
    switch_cycles_ += rte_get_tsc_cycles() - begin;
    held_[from] = true;
    held_[to] = false;
    switches_++;
    switches_to_[change->to]++;
    yields_[change->from][static_cast<size_t>(change->why)]++;
  }

  bool holds(size_t worker) const override { return worker < held_.size() && held_[worker]; }

  void detach(SchedulerView&) override {
    if (controller_) controller_->release_all();
    held_.assign(held_.size(), false);
  }

  json live_metrics(const SchedulerView& view) const override {
    json nfs = json::object();
    for (const auto& [core, queue] : cores_)
      for (const ScheduledNf& nf : queue.nfs())
        nfs[view.deployment.workers[nf.worker].name] = {
            {"switches_in_total", switches_to_.count(nf.nf) ? switches_to_.at(nf.nf) : 0}};
    return {{"nfs", nfs}};
  }

  json report(const SchedulerView& view) const override {
    const Deployment& d = view.deployment;
    double hz = static_cast<double>(rte_get_tsc_hz());
    // By the process switched: an NF's own, or (hybrid) a core's native worker with its NFs as members.
    json nfs = json::object();
    for (const auto& [core, queue] : cores_)
      for (const ScheduledNf& nf : queue.nfs()) {
        const WorkerPlan& worker = d.workers[nf.worker];
        json members = json::array();
        double cost = 0;
        for (const Segment& segment : worker.segments)
          for (int member : segment.nfs) {
            members.push_back(d.nfs[member].name);
            cost += d.nfs[member].cost_cycles;
          }
        json& entry = nfs[worker.name] = {{"core", core},
                                          {"cost_cycles", cost},
                                          {"slice_us", static_cast<double>(nf.slice_cycles) / hz * 1e6},
                                          {"theta_min", nf.theta_min},
                                          {"theta_max", nf.theta_max},
                                          {"switched_in", switches_to_.count(nf.nf) ? switches_to_.at(nf.nf) : 0},
                                          {"yielded", yields_json(nf.nf)}};
        if (members.size() > 1) entry["members"] = members;
      }
    json order = json::object();
    for (const auto& [core, queue] : cores_) {
      json names = json::array();
      for (const ScheduledNf& nf : queue.nfs()) names.push_back(d.workers[nf.worker].name);
      order[std::to_string(core)] = names;
    }
    // The policy the NFs' switches are made under (explain charges each switch at this policy's latency): the fifo
    // backend switches by SCHED_FIFO priorities; signals and the freezer stop and resume NFs left under CFS.
    return {{"policy", options_.backend == "fifo" ? "fifo" : "cfs"},
            {"backend", options_.backend},
            {"gamma", options_.gamma},
            {"slice_fraction", options_.slice_fraction},
            {"occupancy_rules", options_.occupancy},
            {"interval_us", options_.interval_us},
            {"wait_queues", order},
            {"nfs", nfs},
            {"intervals", intervals_},
            {"sampling", options_.sampling},
            {"slice_start", options_.slice_start},
            {"idle_handover_us", options_.idle_handover_us},
            {"residue_wait_us", options_.residue_wait_us},
            {"monitor_samples", monitor_ ? monitor_->samples() : 0},
            {"ring_reads", monitor_ ? monitor_->ring_reads() : 0},
            {"switches", switches_},
            {"controller_us_per_switch",
             switches_ ? json(static_cast<double>(switch_cycles_) / switches_ / hz * 1e6) : json()}};
  }

 private:
  Options options_;
  bool every_interval_;  // options_.sampling, decided once: tick() runs every loop of the manager
  bool group_native_;
  std::unique_ptr<InterfaceMonitor> monitor_;
  std::unique_ptr<ProcessController> controller_;
  std::vector<std::pair<int, CoreQueue>> cores_;
  std::vector<int> worker_of_nf_;
  std::vector<bool> held_;
  std::map<int, uint64_t> switches_to_;
  // Per NF (global index), the switches away from it by YieldReason: what ends its turns.
  std::map<int, std::array<uint64_t, 3>> yields_;
  json yields_json(int nf) const {
    std::array<uint64_t, 3> counts = yields_.count(nf) ? yields_.at(nf) : std::array<uint64_t, 3>{};
    return {{"input_starved", counts[static_cast<size_t>(YieldReason::kInputStarved)]},
            {"output_full", counts[static_cast<size_t>(YieldReason::kOutputFull)]},
            {"slice_expired", counts[static_cast<size_t>(YieldReason::kSliceExpired)]}};
  }
  uint64_t interval_cycles_ = 0;
  std::vector<uint64_t> next_check_;  // per core, "predicted" sampling: when to read the running NF's rings
  uint64_t intervals_ = 0, switches_ = 0, switch_cycles_ = 0;
};

void check(const Deployment& d, SpecErrors& errors) {
  Options o = Options::from(d.scheduler.options);
  if (!(o.gamma > 0)) errors.push_back({"scheduler.gamma", "must be in (0, 1], got " + std::to_string(o.gamma)});
  if (auto reason = backend_unavailable(o.backend)) errors.push_back({"scheduler.backend", *reason});
  uint32_t theta_min = o.theta_min_for(d);
  for (const NfConfig& nf : d.nfs) {
    uint32_t in_capacity = 0, out_capacity = UINT32_MAX;  // as the interface monitor counts them
    for (int ring : nf.in_rings) in_capacity += d.rings[ring].capacity;
    for (int ring : nf.out_rings) out_capacity = std::min(out_capacity, d.rings[ring].capacity);
    if (theta_min >= in_capacity)
      errors.push_back({"scheduler.theta_min", "must be below the capacity of NF '" + nf.name + "''s input ring (" +
                                                   std::to_string(in_capacity) + "), got " +
                                                   std::to_string(theta_min)});
    uint32_t theta_max = o.theta_max_for(out_capacity);
    if (theta_max == 0 || theta_max > out_capacity)
      errors.push_back({"scheduler.theta_max", "must be between 1 and the capacity of NF '" + nf.name +
                                                   "''s output ring (" + std::to_string(out_capacity) + "), got " +
                                                   std::to_string(theta_max)});
  }
}

// The options unis and hybrid share: hybrid is UNiS with the native NFs of a core grouped into one worker.
std::vector<ArgSpec> unis_options() {
  return {
      {.name = "gamma",
       .type = ArgType::Number,
       .default_value = 0.75,
       .help = "head-room factor in (0, 1]: time slice = cost x gamma x capacity(egress); theta_max = gamma x "
               "capacity",
       .min = 0,
       .max = 1},
      {.name = "slice_fraction",
       .type = ArgType::Number,
       .default_value = 0,
       .help = "time slice as a fraction of cost x capacity(egress), for the paper's slice sweep; 0 = gamma",
       .min = 0,
       .max = 4},
      {.name = "theta_min",
       .type = ArgType::Integer,
       .default_value = -1,
       .help = "preempt when the input ring holds no more than this; -1 = burst - 8",
       .min = -1,
       .max = 1 << 20},
      {.name = "theta_max",
       .type = ArgType::Integer,
       .default_value = -1,
       .help = "preempt when the output ring holds at least this; -1 = gamma x capacity",
       .min = -1,
       .max = 1 << 20},
      {.name = "interval_us",
       .type = ArgType::Number,
       .default_value = 1.0,
       .help = "scheduling interval T: the monitoring timer's period in microseconds",
       .min = 0.1,
       .max = 100000},
      {.name = "sampling",
       .type = ArgType::Choice,
       .default_value = "predicted",
       .help = "predicted: read a running NF's rings when, at its estimated cost, it could first reach a threshold "
               "(at "
               "least T apart), and the other rings only to pick a successor; every_interval: read every ring each T "
               "(the paper), which makes the NFs pay to take their ring counters back from the control core",
       .choices = {"every_interval", "predicted"}},
      {.name = "slice_start",
       .type = ArgType::Choice,
       .default_value = "progress",
       .help = "when a turn's time slice starts: progress = when the NF is first seen to move its rings (the switch "
               "reaches its core 10-14 us after the decision on a KVM guest); decision = when UNiS decides (the "
               "paper)",
       .choices = {"decision", "progress"}},
      {.name = "idle_handover_us",
       .type = ArgType::Number,
       .default_value = 20.0,
       .help = "low load: an NF whose input has stayed empty this long hands the core to an NF with any packet, "
               "below theta_min; -1 = never (the paper: a packet below theta_min waits for more to arrive)",
       .min = -1,
       .max = 100000},
      {.name = "residue_wait_us",
       .type = ArgType::Number,
       .default_value = 1000.0,
       .help = "under load: packets below theta_min that have waited this long make their NF worth a turn when "
               "the running one yields (a chain's last packets, a scaled NF's old instance, a light chain "
               "beside a busy one); -1 = never (the paper: they wait until more arrive or the core is idle)",
       .min = -1,
       .max = 1000000},
      {.name = "occupancy",
       .type = ArgType::Boolean,
       .default_value = true,
       .help = "interface-occupancy optimisation; false = switch only when the slice expires (the paper's ablation)"},
      {.name = "backend",
       .type = ArgType::Choice,
       .default_value = "fifo",
       .help = "process controller: SCHED_FIFO priority switching, SIGSTOP/SIGCONT, or the cgroup v2 freezer",
       .choices = kProcessControllerBackends},
  };
}

MachineRequirements unis_requirements(const json& options) {
  std::string backend = options["backend"];
  return MachineRequirements(MachineResource::CycleCosts)
      .need_if(backend == "fifo", MachineResource::RtUnthrottled)
      .need_if(backend == "freezer", MachineResource::CgroupV2Dir);
}

const SchedulerRegistration registration({
    .name = "unis",
    .help =
        "UNiS: a user-space, chain-order-aware scheduler that only watches ring occupancy and switches unmodified NF "
        "processes (Algorithm 1 on the control core).",
    .options = unis_options(),
    .requirements = unis_requirements,
    .check = check,
    .create = [](const json& options) { return std::make_unique<UnisScheduler>(Options::from(options), false); },
    .external_nfs = true,
});

// None of the papers combines these: a core holding Tandem's NFs and unmodified processes runs the native NFs to
// completion in one worker (no rings, no switches between them) and UNiS switches that worker and the external
// processes by ring occupancy, as it would NFs.
const SchedulerRegistration hybrid_registration({
    .name = "hybrid",
    .help = "UNiS over a core's external processes and one run-to-completion worker holding the core's native NFs: "
            "the native NFs run as consecutive calls, and the worker takes turns with the unmodified processes by "
            "ring occupancy.",
    .options = unis_options(),
    .requirements = unis_requirements,
    .check = check,
    .create = [](const json& options) { return std::make_unique<UnisScheduler>(Options::from(options), true); },
    .external_nfs = true,
});

}  // namespace
}  // namespace tandem::unis
