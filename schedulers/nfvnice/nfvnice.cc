// nfvnice: the NFVnice scheduler module (SIGCOMM '17): per-NF cgroup cpu.shares (cgroup v2: cpu.weight) from
// priority x arrival rate x cost, chain backpressure that sheds load at the entry, and idle NFs that block until woken.
// Runs on the control core: the weight loop every `period_us`, watermarks and wake-ups every `wakeup_us`.
#include <rte_cycles.h>

#include <memory>

#include "backpressure.h"
#include "cpu_cgroups.h"
#include "cpu_shares.h"
#include "schedulers/mechanisms/cgroup_fs.h"
#include "schedulers/mechanisms/kernel_policy.h"
#include "schedulers/scheduler.h"
#include "smoothed_rate.h"
#include "wake_up_rule.h"

namespace tandem::nfvnice {
namespace {

// How long after its last congestion a chain counts as congested lately: at overload a ring crosses its high
// watermark thousands of times a second, so a lull this long means the load fell.
constexpr double kCongestedLatelySeconds = 0.1;

struct Options {
  bool intrusive_cost;  // the NF runtime's TSC count around each batch; else the cycle estimator / the spec
  std::string policy;   // cfs or batch, under the cgroups
  double period_us;
  double smoothing_ms;
  bool backpressure;
  double high, low;
  Backpressure::Throttle throttle;
  bool block_on_empty;
  double wakeup_us;
  uint32_t wakeup_threshold;
  double wakeup_wait_us;
  double share_tolerance;
  bool demand_rate;  // a downstream NF weighted by its chain's offer (else by what reached it, as the paper)

  static Options from(const json& o) {
    return {o["cost"].get<std::string>() == "intrusive",
            o["policy"].get<std::string>(),
            o["period_us"].get<double>(),
            o["smoothing_ms"].get<double>(),
            o["backpressure"].get<bool>(),
            o["high_watermark"].get<double>(),
            o["low_watermark"].get<double>(),
            o["throttle"].get<std::string>() == "producer" ? Backpressure::Throttle::Producer
                                                           : Backpressure::Throttle::Upstream,
            o["block_on_empty"].get<bool>(),
            o["wakeup_us"].get<double>(),
            o["wakeup_threshold"].get<uint32_t>(),
            o["wakeup_wait_us"].get<double>(),
            o["share_tolerance"].get<double>(),
            o["rate"].get<std::string>() == "demand"};
  }
};

// What the weight loop knows about one NF.
struct NfState {
  int worker = -1;
  bool entry = false;  // first NF of its chain: arrivals shed at the entry count as its demand
  size_t group = 0;
  SmoothedRate rate, cost;
  uint64_t last_busy = 0, last_in = 0;
  double shares_seconds = 0;  // integral of cpu.shares over time, for the mean
  PendingInput asleep_input;  // what waits for it while it sleeps
  NfState(double tau_s) : rate(tau_s), cost(tau_s) {}
};

class NfvniceScheduler final : public Scheduler {
 public:
  explicit NfvniceScheduler(Options options) : options_(std::move(options)) {}

  void attach(SchedulerView& view) override {
    const Deployment& d = view.deployment;
    hz_ = static_cast<double>(rte_get_tsc_hz());
    // The hierarchy check() found and the control plane made the run's group in (the rule does not change when
    // the control plane enables cpu in the v2 root's cgroup.subtree_control).
    std::optional<CgroupHierarchy> hierarchy = cgroup_hierarchy("cpu");
    if (!hierarchy) throw std::runtime_error("nfvnice: " + cgroup_hierarchy_missing("cpu"));
    // The run's queue: a detached module's removals and this one's creations of the same groups stay in order.
    CgroupWorkQueue* work = view.cgroup_work();
    if (work == nullptr) {
      if (!own_work_) own_work_ = std::make_unique<CgroupWorkQueue>();
      work = own_work_.get();
    }
    cgroups_ = std::make_unique<CpuCgroups>(d.paths.cpu_cgroup_dir, *hierarchy, *work);
    if (options_.backpressure)
      backpressure_ = std::make_unique<Backpressure>(d, options_.high, options_.low, options_.throttle);
    occupancy_.assign(d.rings.size(), 0);
    throttled_.assign(d.workers.size(), false);
    policy_ = KernelPolicy::from_options(options_.policy, json::object());
    nfs_.assign(d.nfs.size(), NfState(options_.smoothing_ms * 1e-3));
    admitted_.assign(d.chains.size(), SmoothedRate(options_.smoothing_ms * 1e-3));
    entry_nf_.assign(d.chains.size(), -1);
    for (const WorkerPlan& plan : d.workers) {
      int n = plan.segments.front().nfs.front();
      NfState& state = nfs_[n];
      state.worker = plan.index;
      state.entry = d.nfs[n].depth == 0;
      if (state.entry) entry_nf_[d.nfs[n].chain] = n;
      state.group = cgroups_->add(d.nfs[n].name, view.worker_pids()[plan.index]);
      policy_.apply(view.worker_pids()[plan.index]);
      view.hints.set_yield_policy(
          plan.index, {.after_batches = 0, .on_empty = 0, .block_on_empty = options_.block_on_empty ? 1u : 0u});
    }
    period_cycles_ = static_cast<uint64_t>(options_.period_us * 1e-6 * hz_);
    congested_lately_cycles_ = static_cast<uint64_t>(kCongestedLatelySeconds * hz_);
    wake_up_rule_ = {.threshold = options_.wakeup_threshold,
                     .wait_cycles = static_cast<uint64_t>(options_.wakeup_wait_us * 1e-6 * hz_)};
  }

  uint64_t tick_period_ns() const override { return static_cast<uint64_t>(options_.wakeup_us * 1e3); }
  // Congested lately, a ring may overflow between two checks of its watermark further apart than `wakeup_us` (the
  // producer not throttled in time): naps beside the traffic then fit between the ticks. Otherwise a late tick only
  // delays a wake-up, which the sleeping NF's input ring holds.
  uint64_t longest_absence_ns() const override {
    return last_tick_tsc_ - last_congested_tsc_ < congested_lately_cycles_ && last_congested_tsc_ != 0
               ? tick_period_ns()
               : kNoAbsenceBound;
  }

  void tick(SchedulerView& view, uint64_t now_tsc) override {
    last_tick_tsc_ = now_tsc;
    if (backpressure_) {
      for (size_t r = 0; r < view.rings().size(); r++) occupancy_[r] = rte_ring_count(view.rings()[r]);
      if (backpressure_->update(occupancy_)) apply_backpressure(view);
      if (backpressure_->any_ring_congested()) last_congested_tsc_ = now_tsc;
    }
    // The wake-up subsystem: an NF asleep on an empty input is woken once packets reach it (wake_up_rule.h).
    for (size_t n = 0; n < nfs_.size(); n++) {
      NfState& nf = nfs_[n];
      if (throttled_[nf.worker] || !view.hints.asleep(nf.worker)) {
        nf.asleep_input.forget();
        continue;
      }
      if (nf.asleep_input.wake_now(wake_up_rule_, view.waiting(static_cast<int>(n)), now_tsc)) {
        view.hints.wake(nf.worker);
        wakeups_++;
      }
    }
    if (now_tsc >= next_weights_tsc_) {
      update_weights(view, static_cast<double>(now_tsc) / hz_);
      next_weights_tsc_ = now_tsc + period_cycles_;
    }
  }

  void detach(SchedulerView& view) override {
    for (size_t c = 0; c < view.deployment.chains.size(); c++) view.hints.set_entry_open(c, true);
    for (size_t w = 0; w < throttled_.size(); w++) {
      view.hints.release(w);
      throttled_[w] = false;
    }
    if (cgroups_) {
      for (const NfState& nf : nfs_) final_shares_.push_back(cgroups_->shares(nf.group));
      writes_ = cgroups_->writes();
      cgroups_->release_all();
    }
    for (pid_t pid : view.worker_pids()) KernelPolicy::restore(pid);
  }

  bool holds(size_t worker) const override { return worker < throttled_.size() && throttled_[worker]; }

  json live_metrics(const SchedulerView& view) const override {
    json nfs = json::object();
    for (size_t n = 0; n < nfs_.size(); n++)
      nfs[view.deployment.nfs[n].name] = {{"cpu_shares", cgroups_ ? cgroups_->shares(nfs_[n].group) : 0},
                                          {"arrival_rate_pps", nfs_[n].rate.value()}};
    return {{"nfs", nfs},
            {"totals",
             {{"weight_updates_total", updates_},
              {"shares_writes_total", cgroups_ ? cgroups_->writes() : 0},
              {"wakeups_total", wakeups_},
              {"congestion_episodes_total", backpressure_ ? backpressure_->episodes() : 0}}}};
  }

  json report(const SchedulerView& view) const override {
    const Deployment& d = view.deployment;
    json nfs = json::object();
    double elapsed = last_update_s_ - first_update_s_;
    for (size_t n = 0; n < nfs_.size(); n++)
      nfs[d.nfs[n].name] = {{"arrival_mpps", nfs_[n].rate.value() / 1e6},
                            {"demand_mpps", demand_of(d, n) / 1e6},
                            {"cost_cycles", cost_of(d, n)},
                            {"weight", d.nfs[n].weight},
                            {"shares_final", n < final_shares_.size() ? json(final_shares_[n]) : json()},
                            {"shares_mean", elapsed > 0 ? json(nfs_[n].shares_seconds / elapsed) : json()}};
    return {{"cost_mode", options_.intrusive_cost ? "intrusive (TSC around each batch, in the NF runtime)"
                                                  : "blackbox (cycle estimator or spec)"},
            {"cgroup", cgroup_used()},
            {"policy", options_.policy},
            {"rate", options_.demand_rate ? "demand" : "arrivals"},
            {"weight_updates", updates_},
            {"shares_writes", writes_},
            {"backpressure", options_.backpressure},
            {"throttle", options_.throttle == Backpressure::Throttle::Producer ? "producer" : "upstream"},
            {"congestion_episodes", backpressure_ ? backpressure_->episodes() : 0},
            {"wakeup_threshold", options_.wakeup_threshold},
            {"wakeups", wakeups_},
            {"cgroup_work", cgroup_work_report(view)},
            {"nfs", nfs}};
  }

 private:
  // Which hierarchy and file the weights went to: shares are NFVnice's unit either way.
  std::string cgroup_used() const {
    if (!cgroups_) return "none";
    if (cgroups_->hierarchy().version == CgroupVersion::V1) return "v1 (cpu.shares)";
    return "v2 (cpu.weight = round(shares x 100 / 1024))";
  }

  // What the cgroup work queue did for the run (this module's groups and any other's): the changes and the longest,
  // which the control loop no longer waits for.
  json cgroup_work_report(const SchedulerView& view) const {
    const CgroupWorkQueue* work = view.cgroup_work() ? view.cgroup_work() : own_work_.get();
    if (work == nullptr) return json();
    return {{"changes", work->done()}, {"longest_ms", work->longest_ms()}};
  }

  double cost_of(const Deployment& d, size_t n) const {
    if (!options_.intrusive_cost) return d.nfs[n].cost_cycles;
    return nfs_[n].cost.has_value() ? nfs_[n].cost.value() : 0.0;
  }

  void apply_backpressure(SchedulerView& view) {
    for (const ChainConfig& chain : view.deployment.chains)
      view.hints.set_entry_open(chain.index, !backpressure_->entry_closed(chain.index));
    for (size_t n = 0; n < nfs_.size(); n++) {
      int w = nfs_[n].worker;
      bool throttled = backpressure_->nf_throttled(static_cast<int>(n));
      if (throttled == throttled_[w]) continue;
      throttled_[w] = throttled;
      if (throttled)
        view.hints.hold(w);
      else
        view.hints.release(w);
    }
  }

  // The rate the weights take for NF n: its arrivals, or downstream, what they would be were its chain not throttled.
  double demand_of(const Deployment& d, size_t n) const {
    int chain = d.nfs[n].chain, entry = entry_nf_[chain];
    if (!options_.demand_rate || nfs_[n].entry || entry < 0) return nfs_[n].rate.value();
    return demand_rate(nfs_[n].rate.value(), nfs_[entry].rate.value(), admitted_[chain].value());
  }

  void update_weights(SchedulerView& view, double now_s) {
    const Deployment& d = view.deployment;
    // What each chain's entry ring took: the packets the chain admitted (its entry NF's rate is what it was offered).
    for (const ChainConfig& chain : d.chains)
      admitted_[chain.index].update(counter_read(view.ring_counters(chain.entry_ring).enqueued), now_s);
    for (size_t n = 0; n < nfs_.size(); n++) {
      NfState& nf = nfs_[n];
      uint64_t arrivals = view.arrivals(static_cast<int>(n));
      if (nf.entry) arrivals += view.entry_backpressure(d.nfs[n].chain);
      nf.rate.update(arrivals, now_s);
      if (options_.intrusive_cost) {
        const NfCounters& counters = view.nf_counters(n);
        uint64_t busy = counter_read(counters.service_cycles), in = counter_read(counters.service_packets);
        if (in > nf.last_in && updates_ > 0)
          nf.cost.fold(static_cast<double>(busy - nf.last_busy) / static_cast<double>(in - nf.last_in),
                       now_s - last_update_s_);
        nf.last_busy = busy;
        nf.last_in = in;
      }
    }
    std::vector<NfDemand> demands;
    for (size_t n = 0; n < nfs_.size(); n++)
      demands.push_back({.core = d.nfs[n].core,
                         .weight = d.nfs[n].weight,
                         .rate_pps = demand_of(d, n),
                         .cost_cycles = cost_of(d, n)});
    std::vector<uint64_t> shares = cpu_shares(demands);
    for (size_t n = 0; n < nfs_.size(); n++) {
      if (updates_ > 0)
        nfs_[n].shares_seconds += static_cast<double>(cgroups_->shares(nfs_[n].group)) * (now_s - last_update_s_);
      if (shares_worth_writing(cgroups_->shares(nfs_[n].group), shares[n], options_.share_tolerance))
        cgroups_->set_shares(nfs_[n].group, shares[n]);
    }
    if (updates_ == 0) first_update_s_ = now_s;
    last_update_s_ = now_s;
    updates_++;
  }

  Options options_;
  double hz_ = 1;
  KernelPolicy policy_;
  std::unique_ptr<CgroupWorkQueue>
      own_work_;  // where the view has no queue (a test's): before the groups, which use it
  std::unique_ptr<CpuCgroups> cgroups_;
  std::unique_ptr<Backpressure> backpressure_;
  std::vector<NfState> nfs_;
  std::vector<SmoothedRate> admitted_;  // by chain: what its entry ring took, smoothed as the NFs' rates are
  std::vector<int> entry_nf_;           // by chain: the NF at its entry, whose rate is what the chain was offered
  std::vector<uint32_t> occupancy_;
  std::vector<bool> throttled_;  // by worker
  uint64_t period_cycles_ = 0, next_weights_tsc_ = 0;
  // When a ring was last congested; since then less than `congested_lately_cycles_` is "lately".
  uint64_t last_tick_tsc_ = 0, last_congested_tsc_ = 0, congested_lately_cycles_ = 0;
  WakeUpRule wake_up_rule_;
  uint64_t updates_ = 0, writes_ = 0, wakeups_ = 0;
  double first_update_s_ = 0, last_update_s_ = 0;
  std::vector<uint64_t> final_shares_;
};

// Which hierarchy the run's cpu groups go in, for the control plane that makes the run's group there:
// {"hierarchy": "v1" or "v2", "root": where it is mounted}; where neither offers cpu, check() has refused the spec.
json cpu_cgroup_requirement() {
  std::optional<CgroupHierarchy> hierarchy = cgroup_hierarchy("cpu");
  if (!hierarchy) return {{"hierarchy", "none"}, {"why", cgroup_hierarchy_missing("cpu")}};
  return {{"hierarchy", hierarchy->name()}, {"root", hierarchy->root}};
}

void check(const Deployment& d, SpecErrors& errors) {
  Options o = Options::from(d.scheduler.options);
  if (!(o.low < o.high))
    errors.push_back({"scheduler.low_watermark",
                      "must be below high_watermark (" + std::to_string(o.high) + "), got " + std::to_string(o.low)});
  for (const NfConfig& nf : d.nfs)
    if (!(nf.weight > 0))
      errors.push_back({spec_path(nf) + ".weight", "must be a positive number, got " + std::to_string(nf.weight)});
  if (!cgroup_hierarchy("cpu"))
    errors.push_back({"scheduler.name", "nfvnice needs the cgroup cpu controller: " + cgroup_hierarchy_missing("cpu")});
  if (!o.intrusive_cost)
    for (const NfConfig& nf : d.nfs)
      if (nf.cost_cycles < 0) errors.push_back({spec_path(nf) + ".cost_cycles", "must not be negative"});
}

const SchedulerRegistration registration({
    .name = "nfvnice",
    .help = "NFVnice: per-NF cgroup cpu.shares (cgroup v2: cpu.weight) from weight x arrival rate x cost, backpressure "
            "that "
            "drops at the chain's entry, and NFs that block when their input is empty.",
    .options =
        {
            {.name = "cost",
             .type = ArgType::Choice,
             .default_value = "intrusive",
             .help = "per-packet cost: measured by the NF runtime (TSC around each batch), or from the cycle "
                     "estimator/spec",
             .choices = {"intrusive", "blackbox"}},
            {.name = "policy",
             .type = ArgType::Choice,
             .default_value = "batch",
             .help = "kernel policy of the NFs under their cgroups",
             .choices = {"cfs", "batch"}},
            {.name = "period_us",
             .type = ArgType::Number,
             .default_value = 1000.0,
             .help = "how often cpu.shares are recomputed",
             .min = 50,
             .max = 1e6},
            {.name = "share_tolerance",
             .type = ArgType::Number,
             .default_value = 0.1,
             .help =
                 "relative change of an NF's cpu.shares below which the written value is kept (0 = write every change)",
             .min = 0,
             .max = 1},
            {.name = "rate",
             .type = ArgType::Choice,
             .default_value = "demand",
             .help = "the rate a downstream NF is weighted by: demand = what reached it, scaled by what its chain was "
                     "offered over what its entry admitted; arrivals = what reached it (the paper), which leaves a "
                     "chain whose costly NF sits behind a cheap one with the share it had (four two-NF chains: Jain "
                     "0.88-0.90, against 0.99)",
             .choices = {"demand", "arrivals"}},
            {.name = "smoothing_ms",
             .type = ArgType::Number,
             .default_value = 10.0,
             .help = "time constant of the moving averages of arrival rate and cost",
             .min = 0.1,
             .max = 10000},
            {.name = "backpressure",
             .type = ArgType::Boolean,
             .default_value = true,
             .help = "shed a congested chain's packets at its entry and block its upstream NFs"},
            {.name = "high_watermark",
             .type = ArgType::Number,
             .default_value = 0.8,
             .help = "a ring holding this fraction of its capacity turns its chain's backpressure on",
             .min = 0.01,
             .max = 1},
            {.name = "low_watermark",
             .type = ArgType::Number,
             .default_value = 0.6,
             .help = "... and off again once it holds no more than this fraction",
             .min = 0,
             .max = 0.99},
            {.name = "throttle",
             .type = ArgType::Choice,
             .default_value = "producer",
             .help = "which NFs a congested ring blocks: every NF upstream of it (the paper), or only its producer "
                     "(those before it stop in turn as their own output rings fill)",
             .choices = {"upstream", "producer"}},
            {.name = "block_on_empty",
             .type = ArgType::Boolean,
             .default_value = true,
             .help = "an NF whose input is empty sleeps (futex) until the manager sees packets for it"},
            {.name = "wakeup_us",
             .type = ArgType::Number,
             .default_value = 10.0,
             .help = "how often the manager checks watermarks and wakes sleeping NFs",
             .min = 1,
             .max = 10000},
            {.name = "wakeup_threshold",
             .type = ArgType::Integer,
             .default_value = 1,
             .help = "packets a sleeping NF's input must hold before the manager wakes it (OpenNetVM's "
                     "PKT_WAKEUP_THRESHOLD, 1 there)",
             .min = 1,
             .max = 4096},
            {.name = "wakeup_wait_us",
             .type = ArgType::Number,
             .default_value = 100.0,
             .help = "... or how long the first of fewer packets may wait before it is woken anyway",
             .min = 0,
             .max = 100000},
        },
    .requirements =
        [](const json& options) {
          return MachineRequirements(MachineResource::CpuCgroupDir, cpu_cgroup_requirement())
              .need_if(options["cost"].get<std::string>() == "blackbox", MachineResource::CycleCosts);
        },
    .check = check,
    .create = [](const json& options) { return std::make_unique<NfvniceScheduler>(Options::from(options)); },
});

}  // namespace
}  // namespace tandem::nfvnice
