// bubble: the Bubble scheduler module (IWQoS '19): the NFs of a core run as user-level threads of one worker
// (Boost.Context), each taking at most its batch size per turn; batch sizes follow arrival rates (Algorithm
// 1) and priority weights; TSC load windows raise scale events and migrate NFs between local schedulers.
#include <rte_cycles.h>

#include <algorithm>
#include <map>

#include "batch_size.h"
#include "contract/batch.h"
#include "load_windows.h"
#include "migration.h"
#include "schedulers/chain_order.h"
#include "schedulers/mechanisms/kernel_policy.h"
#include "schedulers/scheduler.h"

namespace tandem::bubble {
namespace {

struct Options {
  BatchRule rule;
  double period_ms;       // batch-size adaptation period
  double load_period_ms;  // how often load is measured...
  double load_window_ms;  // ... and for how long
  double mu;              // utilisation above which a local scheduler asks to scale
  int spare_workers;      // extra local schedulers per core that start empty (migration targets)
  KernelPolicy policy;    // the workers' (with_lone_worker_policy)

  static Options from(const json& o) {
    BatchRule rule{.lower = o["lower_batch"].get<uint32_t>(),
                   .upper = o["upper_batch"].get<uint32_t>(),
                   .alpha = o["alpha"].get<double>(),
                   .beta = o["beta"].get<double>(),
                   .epsilon = o["epsilon"].get<double>()};
    return {rule,
            o["period_ms"].get<double>(),
            o["load_period_ms"].get<double>(),
            o["load_window_ms"].get<double>(),
            o["mu"].get<double>(),
            o["spare_workers_per_core"].get<int>(),
            KernelPolicy::from_options(o["policy"], o)};
  }
};

// The rate an NF's initial batch follows: the one the placement solver planned for it, else what its chain
// offers on average (stepped load: Algorithm 1 then follows the steps). 0 = as fast as possible, unknown.
double initial_rate(const Deployment& d, const NfConfig& nf) {
  return nf.planned_rate_pps.value_or(d.chains[nf.chain].traffic.mean_rate_pps);
}

struct NfState {
  uint32_t base = 0;      // rate-driven batch (Algorithm 1)
  uint32_t batch = 0;     // what the NF runs with: base biased by weight
  uint32_t initial = 0;   // `batch` at attach, for the report
  double last_rate = -1;  // pps over the previous period; -1 = none yet
  uint64_t last_arrivals = 0;
  uint64_t load_at_open = 0, poll_at_open = 0;
  double last_load = 0;  // fraction of a core in the last window
  uint64_t increases = 0, decreases = 0;
};

class BubbleScheduler final : public Scheduler {
 public:
  explicit BubbleScheduler(Options options) : options_(options) {}

  // One local scheduler per NF core, plus spares; each has a thread for every NF of its core, in the order
  // table (chain order, chains interleaved), and runs those it holds.
  std::vector<WorkerPlan> plan_workers(const Deployment& d) const override {
    std::vector<WorkerPlan> plans;
    for (int core : nf_cores(d)) {
      std::vector<Segment> segments;
      for (int nf : chain_order_on_core(d, core)) segments.push_back(segment_of(d.nfs, {nf}));
      for (int spare = 0; spare <= options_.spare_workers; spare++) {
        WorkerPlan plan;
        plan.index = static_cast<int>(plans.size());
        plan.name = "bubble@core" + std::to_string(core) + (spare ? ".spare" + std::to_string(spare) : "");
        plan.core = core;
        plan.lcore_id = plan.index + 1;
        plan.segments = segments;
        plan.runtime = Runtime::UserLevelThreads;
        plans.push_back(plan);
      }
    }
    return plans;
  }

  void attach(SchedulerView& view) override {
    const Deployment& d = view.deployment;
    hz_ = static_cast<double>(rte_get_tsc_hz());
    view_ = &view;
    nfs_.assign(d.nfs.size(), NfState{});
    std::map<int, double> max_rate, max_weight;
    for (const NfConfig& nf : d.nfs) {
      max_rate[nf.core] = std::max(max_rate[nf.core], initial_rate(d, nf));
      max_weight[nf.core] = std::max(max_weight[nf.core], nf.weight);
    }
    max_weight_ = max_weight;
    for (const NfConfig& nf : d.nfs) {
      NfState& state = nfs_[nf.index];
      // A batch from the spec, or from the rates the placement solver planned (its objective weighed priorities
      // already), is taken as it is; otherwise the base comes from the offered rates, biased by the NF's weight.
      uint32_t given = nf.batch > 0          ? nf.batch
                       : nf.planned_rate_pps ? initial_batch(*nf.planned_rate_pps, max_rate[nf.core], options_.rule)
                                             : 0;
      double bias = nf.weight / max_weight[nf.core];
      state.base = given > 0 ? round_batch(given / bias, options_.rule)
                             : initial_batch(initial_rate(d, nf), max_rate[nf.core], options_.rule);
      state.batch = given > 0 ? round_batch(given, options_.rule)
                              : weighted_batch(state.base, nf.weight, max_weight[nf.core], options_.rule);
      state.initial = state.batch;
      view.hints.place_nf(nf.index, state.batch, primary_worker(d, nf.core));
    }
    for (size_t w = 0; w < d.workers.size(); w++) {
      options_.policy.apply(view.worker_pids()[w]);  // one kernel thread per core: nothing for the kernel to share
      view.hints.set_yield_policy(w, {});
    }
    period_cycles_ = static_cast<uint64_t>(options_.period_ms * 1e-3 * hz_);
    windows_.emplace(static_cast<uint64_t>(options_.load_period_ms * 1e-3 * hz_),
                     static_cast<uint64_t>(options_.load_window_ms * 1e-3 * hz_));
    start_tsc_ = rte_rdtsc();
  }

  uint64_t tick_period_ns() const override { return 1'000'000; }

  void tick(SchedulerView& view, uint64_t now_tsc) override {
    if (now_tsc >= next_adapt_tsc_) {
      adapt(view, now_tsc);
      next_adapt_tsc_ = now_tsc + period_cycles_;
    }
    switch (windows_->poll(now_tsc)) {
      case LoadWindows::Event::Open:
        open_window(view);
        break;
      case LoadWindows::Event::Close:
        close_window(view, now_tsc);
        break;
      case LoadWindows::Event::None:
        break;
    }
  }

  void detach(SchedulerView& view) override {
    for (size_t w = 0; w < view.deployment.workers.size(); w++) {
      if (w < view.worker_pids().size()) KernelPolicy::restore(view.worker_pids()[w]);
      view.hints.set_load_window(w, false);
      view.hints.wake(w);  // a spare asleep must see `stop`
    }
  }

  // A local scheduler that holds no NF sleeps by design (a spare waiting for a migration).
  bool holds(size_t worker) const override { return view_ && owned_by(*view_, static_cast<int>(worker)) == 0; }

  json live_metrics(const SchedulerView& view) const override {
    json nfs = json::object();
    for (size_t n = 0; n < nfs_.size(); n++)
      nfs[view.deployment.nfs[n].name] = {{"batch_size", nfs_[n].batch},
                                          {"load_share", nfs_[n].last_load},
                                          {"batch_increases_total", nfs_[n].increases},
                                          {"batch_decreases_total", nfs_[n].decreases}};
    return {{"nfs", nfs},
            {"totals", {{"scale_events_total", scale_events_.size()}, {"migrations_total", migrations_.size()}}}};
  }

  json report(const SchedulerView& view) const override {
    const Deployment& d = view.deployment;
    json nfs = json::object();
    for (const NfConfig& nf : d.nfs) {
      const NfState& s = nfs_.empty() ? NfState{} : nfs_[nf.index];
      nfs[nf.name] = {
          {"batch_initial", s.initial ? json(s.initial) : json()},
          {"batch_final", s.batch},
          {"weight", nf.weight},
          {"increases", s.increases},
          {"decreases", s.decreases},
          {"worker",
           view.deployment.workers.empty() ? json() : json(view.deployment.workers[owner(view, nf.index)].name)}};
    }
    json order = json::object();
    for (const WorkerPlan& plan : d.workers) {
      json names = json::array();
      for (const Segment& s : plan.segments) names.push_back(d.nfs[s.nfs.front()].name);
      order[plan.name] = names;
    }
    // One kernel thread per core, under the policy asked; explain charges their few switches at its latency.
    json out = options_.policy.describe();
    out.update({{"runtime", "user-level threads (Boost.Context), one worker per core"},
                {"rule",
                 {{"lower", options_.rule.lower},
                  {"upper", options_.rule.upper},
                  {"alpha", options_.rule.alpha},
                  {"beta", options_.rule.beta},
                  {"epsilon", options_.rule.epsilon},
                  {"period_ms", options_.period_ms}}},
                {"mu", options_.mu},
                {"order_tables", order},
                {"nfs", nfs},
                {"load", load_samples_},
                {"scale_events", scale_events_},
                {"migrations", migrations_}});
    return out;
  }

 private:
  static int primary_worker(const Deployment& d, int core) {
    for (const WorkerPlan& plan : d.workers)
      if (plan.core == core) return plan.index;
    throw std::runtime_error("bubble: no worker on core " + std::to_string(core));
  }
  static int owner(const SchedulerView& view, int nf) { return view.hints.owner(nf); }
  static size_t owned_by(const SchedulerView& view, int worker) {
    size_t count = 0;
    for (const NfConfig& nf : view.deployment.nfs) count += owner(view, nf.index) == worker;
    return count;
  }

  void adapt(SchedulerView& view, uint64_t now_tsc) {
    const Deployment& d = view.deployment;
    double elapsed = last_adapt_tsc_ ? static_cast<double>(now_tsc - last_adapt_tsc_) / hz_ : 0;
    for (const NfConfig& nf : d.nfs) {
      NfState& s = nfs_[nf.index];
      uint64_t arrivals = view.arrivals(nf.index);
      if (elapsed > 0) {
        double rate = static_cast<double>(arrivals - s.last_arrivals) / elapsed;
        if (s.last_rate >= 0) {
          uint32_t next = adapt_batch(s.base, s.last_rate, rate, options_.rule);
          s.increases += next > s.base;
          s.decreases += next < s.base;
          s.base = next;
          uint32_t batch = weighted_batch(s.base, nf.weight, max_weight_[nf.core], options_.rule);
          if (batch != s.batch) view.hints.set_batch_budget(nf.index, batch);
          s.batch = batch;
        }
        s.last_rate = rate;
      }
      s.last_arrivals = arrivals;
    }
    last_adapt_tsc_ = now_tsc;
  }

  void open_window(SchedulerView& view) {
    for (const NfConfig& nf : view.deployment.nfs) {
      nfs_[nf.index].load_at_open = counter_read(view.nf_counters(nf.index).load_cycles);
      nfs_[nf.index].poll_at_open = counter_read(view.nf_counters(nf.index).poll_cycles);
    }
    for (size_t w = 0; w < view.deployment.workers.size(); w++) view.hints.set_load_window(w, true);
  }

  void close_window(SchedulerView& view, uint64_t now_tsc) {
    const Deployment& d = view.deployment;
    for (size_t w = 0; w < d.workers.size(); w++) view.hints.set_load_window(w, false);
    auto window = static_cast<double>(now_tsc - windows_->opened_at());
    std::vector<SchedulerLoad> schedulers;
    for (const WorkerPlan& plan : d.workers) schedulers.push_back({plan.index, 0, {}});
    std::map<int, double> core_load, core_polling;
    json nf_loads = json::object();
    for (const WorkerPlan& plan : d.workers)
      for (const Segment& segment : plan.segments) {
        int nf = segment.nfs.front();
        if (owner(view, nf) != plan.index) continue;
        NfState& s = nfs_[nf];
        s.last_load = static_cast<double>(counter_read(view.nf_counters(nf).load_cycles) - s.load_at_open) / window;
        double polling = static_cast<double>(counter_read(view.nf_counters(nf).poll_cycles) - s.poll_at_open) / window;
        schedulers[plan.index].utilisation += s.last_load;
        schedulers[plan.index].nfs.push_back({nf, s.last_load});
        core_load[plan.core] += s.last_load;
        core_polling[plan.core] += polling;
        nf_loads[d.nfs[nf].name] = s.last_load;
      }
    double t = static_cast<double>(now_tsc - start_tsc_) / hz_;
    json cores = json::object();
    for (auto [core, load] : core_load)
      cores[std::to_string(core)] = {{"utilisation", load}, {"counting_busy_polls", core_polling[core]}};
    json workers = json::object();
    for (const SchedulerLoad& s : schedulers) workers[d.workers[s.worker].name] = s.utilisation;
    load_samples_.push_back({{"t_s", t}, {"cores", cores}, {"workers", workers}, {"nfs", nf_loads}});
    for (const ScaleDecision& decision : decide_scaling(schedulers, options_.mu)) {
      json event = {{"t_s", t},
                    {"worker", d.workers[decision.worker].name},
                    {"utilisation", schedulers[decision.worker].utilisation}};
      if (decision.migration) {
        const Migration& m = *decision.migration;
        view.hints.assign(m.nf, m.to);
        event["action"] = "migrated " + d.nfs[m.nf].name + " to " + d.workers[m.to].name;
        migrations_.push_back(
            {{"t_s", t}, {"nf", d.nfs[m.nf].name}, {"from", d.workers[m.from].name}, {"to", d.workers[m.to].name}});
      } else {
        event["action"] = "none: " + decision.reason;
      }
      scale_events_.push_back(event);
    }
  }

  Options options_;
  double hz_ = 1;
  std::vector<NfState> nfs_;
  std::map<int, double> max_weight_;
  uint64_t period_cycles_ = 0, next_adapt_tsc_ = 0, last_adapt_tsc_ = 0, start_tsc_ = 0;
  std::optional<LoadWindows> windows_;
  const SchedulerView* view_ = nullptr;
  json load_samples_ = json::array(), scale_events_ = json::array(), migrations_ = json::array();
};

void check(const Deployment& d, SpecErrors& errors) {
  Options o = Options::from(d.scheduler.options);
  for (auto [field, value] : {std::pair{"lower_batch", o.rule.lower}, std::pair{"upper_batch", o.rule.upper}})
    if (value % kBatchQuantum != 0)
      errors.push_back({std::string("scheduler.") + field, "must be a multiple of 16, got " + std::to_string(value)});
  if (o.rule.lower > o.rule.upper)
    errors.push_back({"scheduler.lower_batch", "must not exceed upper_batch (" + std::to_string(o.rule.upper) +
                                                   "), got " + std::to_string(o.rule.lower)});
  if (!(o.rule.alpha > 1))
    errors.push_back({"scheduler.alpha",
                      "must be greater than 1 (batches grow by this factor), got " + std::to_string(o.rule.alpha)});
  if (!(o.rule.beta > 0))
    errors.push_back({"scheduler.beta", "must be greater than 0 (batches shrink by this many packets), got " +
                                            std::to_string(o.rule.beta)});
  if (o.load_window_ms >= o.load_period_ms)
    errors.push_back(
        {"scheduler.load_window_ms", "must be shorter than load_period_ms (" + std::to_string(o.load_period_ms) + ")"});
  if (o.policy.realtime() && o.spare_workers > 0)
    errors.push_back({"scheduler.policy",
                      "fifo needs spare_workers_per_core 0: a spare shares its core with the first "
                      "worker, and under SCHED_FIFO the first, a poller, keeps it"});
  for (const NfConfig& nf : d.nfs) {
    if (nf.batch != 0 && (nf.batch % kBatchQuantum != 0 || nf.batch < o.rule.lower || nf.batch > o.rule.upper))
      errors.push_back({spec_path(nf) + ".batch", "must be a multiple of 16 between lower_batch and upper_batch (" +
                                                      std::to_string(o.rule.lower) + ".." +
                                                      std::to_string(o.rule.upper) + "), got " +
                                                      std::to_string(nf.batch)});
    if (!(nf.weight > 0))
      errors.push_back({spec_path(nf) + ".weight", "must be a positive number, got " + std::to_string(nf.weight)});
  }
}

const SchedulerRegistration registration({
    .name = "bubble",
    .help =
        "Bubble: the NFs of a core run as user-level threads of one process, each taking at most its batch size per "
        "turn; batch sizes follow arrival rates and priority weights, and TSC load windows raise scale events.",
    .options = with_lone_worker_policy({
        {.name = "lower_batch",
         .type = ArgType::Integer,
         .default_value = 16,
         .help = "smallest batch size (a multiple of 16)",
         .min = 16,
         .max = kMaxBurst},
        {.name = "upper_batch",
         .type = ArgType::Integer,
         .default_value = 1024,
         .help = "largest batch size (a multiple of 16)",
         .min = 16,
         .max = kMaxBurst},
        {.name = "alpha",
         .type = ArgType::Number,
         .default_value = 2.0,
         .help = "factor applied to an NF's batch when its arrival rate rose by epsilon or more (add fast); > 1",
         .max = 64},
        {.name = "beta",
         .type = ArgType::Number,
         .default_value = 16.0,
         .help = "packets taken off an NF's batch when its arrival rate fell by epsilon or more (decrease slowly); > 0",
         .max = 1024},
        {.name = "epsilon",
         .type = ArgType::Number,
         .default_value = 0.1,
         .help = "relative change of an NF's arrival rate between periods that counts as a rise or a fall",
         .min = 0.001,
         .max = 10},
        {.name = "period_ms",
         .type = ArgType::Number,
         .default_value = 50.0,
         .help = "batch-size adaptation period",
         .min = 1,
         .max = 60000},
        {.name = "load_period_ms",
         .type = ArgType::Number,
         .default_value = 1000.0,
         .help = "how often core load is measured",
         .min = 10,
         .max = 60000},
        {.name = "load_window_ms",
         .type = ArgType::Number,
         .default_value = 30.0,
         .help = "how long each load measurement counts TSC cycles",
         .min = 1,
         .max = 60000},
        {.name = "mu",
         .type = ArgType::Number,
         .default_value = 0.9,
         .help = "a local scheduler busier than this fraction of its core raises a scale event",
         .min = 0.01,
         .max = 1},
        {.name = "spare_workers_per_core",
         .type = ArgType::Integer,
         .default_value = 0,
         .help = "extra local schedulers per core that start with no NF and take migrated ones (stand-ins for more "
                 "cores)",
         .min = 0,
         .max = 4},
    }),
    .requirements = lone_worker_requirements,
    .check = check,
    .create = [](const json& options) { return std::make_unique<BubbleScheduler>(Options::from(options)); },
});

}  // namespace
}  // namespace tandem::bubble
