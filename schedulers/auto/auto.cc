// auto: one scheduler that picks the others: a model predicts each policy on the run's NFs for the spec's objective,
// the best runs, and while traffic flows auto re-decides from measured rates and switches live: in place among the
// policies of the running layout, and to another layout by asking the run to re-lay the NFs out.
#include <rte_cycles.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "candidate_scheduler.h"
#include "core_decision.h"
#include "hysteresis.h"
#include "policy_model.h"
#include "schedulers/per_core/core_choices.h"
#include "schedulers/run_to_completion_plan.h"
#include "schedulers/scheduler.h"

namespace tandem::autosched {
namespace {

struct Options {
  Objective objective;
  std::optional<double> slo_p99_us;
  double redecide_ms;
  double margin;
  int confirmations;
  SwitchCosts costs;
  std::vector<std::string> candidates;  // the spec's choice among candidate_policies(); empty: every one

  static Options from(const json& o) {
    Options options{objective_from_name(o["objective"].get<std::string>()),
                    std::nullopt,
                    o["redecide_ms"].get<double>(),
                    o["margin"].get<double>(),
                    o["confirmations"].get<int>(),
                    {}};
    if (double slo = o["slo_p99_us"].get<double>(); slo > 0) options.slo_p99_us = slo;
    options.costs.yield_ns = o["yield_ns"].get<double>();
    options.costs.wakeup_ns = o["wakeup_ns"].get<double>();
    options.costs.priority_switch_ns = o["priority_switch_ns"].get<double>();
    options.costs.thread_switch_ns = o["thread_switch_ns"].get<double>();
    options.costs.ring_hop_cycles = o["ring_hop_cycles"].get<double>();
    options.costs.sleeper_wakeup_ns = o["sleeper_wakeup_ns"].get<double>();
    options.costs.idle_handover_ns = o["idle_handover_ns"].get<double>();
    std::string list = o["candidates"].get<std::string>();
    for (size_t begin = 0; begin < list.size();) {
      size_t end = std::min(list.find(',', begin), list.size());
      if (end > begin) options.candidates.push_back(list.substr(begin, end - begin));
      begin = end + 1;
    }
    return options;
  }
};

// TSC cycles per second. The plan is made before the manager starts DPDK, whose rte_get_tsc_hz() answers only after;
// until then the TSC is counted over 20 ms of the steady clock (the model needs it to a few per cent), once per
// process: a check and a plan each ask, and the rate does not change between them.
double tsc_hz() {
  if (uint64_t hz = rte_get_tsc_hz(); hz > 0) return static_cast<double>(hz);
  static const double counted = [] {
    auto begin = std::chrono::steady_clock::now();
    uint64_t tsc_begin = rte_rdtsc();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    uint64_t tsc_end = rte_rdtsc();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    return static_cast<double>(tsc_end - tsc_begin) / seconds;
  }();
  return counted;
}

// The model's view of the run: each NF's chain, core, cost and kind; each chain's offer (the spec's, or as measured).
Workload workload_of(const Deployment& d, double hz, const std::vector<double>& measured_offer_pps) {
  Workload w;
  w.hz = hz;
  w.batch = d.burst;
  for (const NfConfig& nf : d.nfs)
    w.nfs.push_back({.chain = nf.chain,
                     .core = nf.core,
                     .cost_cycles = nf.cost_cycles,
                     .external = nf.external(),
                     .kernel_io = nf.kernel_io,
                     .follows = consecutive_feeder(d, nf)});
  for (const ChainConfig& chain : d.chains) {
    // Before any measurement: the rate the run starts with (a stepped rate's first step, which auto re-decides
    // from when the load moves); a port's traffic is unknown until it flows.
    const std::vector<double>& steps = chain.traffic.rate_steps_pps;
    double offer = chain.index < static_cast<int>(measured_offer_pps.size()) ? measured_offer_pps[chain.index]
                   : chain.from_port >= 0                                    ? 0
                   : !steps.empty() && steps.front() > 0                     ? steps.front()
                                                                             : chain.traffic.mean_rate_pps;
    double weight = chain.nfs.empty() ? 1 : d.nfs[chain.nfs.front()].weight;
    w.chains.push_back({.offered_pps = offer, .weight = weight});
  }
  if (!d.chains.empty() && !d.chains.front().nfs.empty()) {
    const NfConfig& first = d.nfs[d.chains.front().nfs.front()];
    if (!first.in_rings.empty()) w.ring_capacity = d.rings[first.in_rings.front()].capacity;
  }
  return w;
}

// The decision at the start, per core where the model says so and per_core accepts the mix as its check would
// (otherwise one policy, the reason saying why not per core).
Decision start_decision(const Options& o, const Deployment& d, double hz) {
  return decide_per_core(workload_of(d, hz, {}), o.objective, o.slo_p99_us, o.costs, o.candidates, o.margin,
                         per_core_refusal(d));
}

// Whether the run can start every NF of `d` again in other processes (a re-layout): not a kernel-I/O NF.
bool relaid_out(const Deployment& d) {
  return std::none_of(d.nfs.begin(), d.nfs.end(), [](const NfConfig& nf) { return nf.kernel_io; });
}

// Whether a switch to `candidate` is in place: it runs the NFs of `d` in the run's processes (switches_in_place).
bool runs_in_place(const CandidateScheduler& candidate, const Deployment& d) {
  return switches_in_place(candidate.create()->plan_workers(d), d.workers);
}

// What auto may need: the costs its model reads, and what each policy it may run needs. The costs are not known yet
// when this is asked (the control plane measures them after), so this follows the NFs' kinds, the objective and
// the spec's candidates alone: an external NF leaves unis, hybrid and cfs, kernel-I/O NFs scc; for native NFs the
// model's choices rtc, rtc-sleep and bubble (each real-time: RT throttling lifted) beat the others, but for fairness
// nfvnice may come close. `o`: auto's own options, which are not the deployment's where auto is switched
// to live (its scheduler is then the one running).
MachineRequirements auto_requirements(const Options& o, const Deployment& d) {
  bool kernel_io = false, external = false;
  for (const NfConfig& nf : d.nfs) {
    kernel_io = kernel_io || nf.kernel_io;
    external = external || nf.external();
  }
  std::vector<std::string> may_run;
  if (kernel_io) {
    may_run = {"scc"};
  } else if (!o.candidates.empty()) {
    for (const std::string& candidate : o.candidates)
      if (!external || candidate == "unis" || candidate == "hybrid" || candidate == "cfs") may_run.push_back(candidate);
  } else if (external) {
    may_run = {"unis", "hybrid"};
  } else {
    may_run = {"rtc", "bubble"};
    if (o.objective == Objective::Fairness) may_run.push_back("nfvnice");
  }
  MachineRequirements needs(MachineResource::CycleCosts);
  needs.need(MachineResource::SwitchCosts);
  for (const std::string& policy : may_run) needs |= CandidateScheduler(policy).requirements();
  return needs;
}

class AutoScheduler final : public Scheduler {
 public:
  explicit AutoScheduler(Options options) : o_(std::move(options)), hysteresis_(o_.margin, o_.confirmations) {}

  std::vector<WorkerPlan> plan_workers(const Deployment& d) const override {
    decide_at_start(d);
    return inner_->plan_workers(d);
  }

  void attach(SchedulerView& view) override {
    mix_answers_.clear();  // attached anew: another layout, a chain added or removed, an NF restarted
    decide_at_start(view.deployment);
    hz_ = static_cast<double>(rte_get_tsc_hz());
    inner_->attach(view);
    last_decision_tsc_ = last_inner_tick_ = rte_get_tsc_cycles();
    if (start_tsc_ == 0) start_tsc_ = last_decision_tsc_;  // attached again after a re-layout: the run's clock goes on
    offers_at_last_decision_ = offers(view);
  }

  uint64_t tick_period_ns() const override { return tick_ns_; }
  uint64_t longest_absence_ns() const override { return inner_ ? inner_->longest_absence_ns() : kNoAbsenceBound; }

  void tick(SchedulerView& view, uint64_t now_tsc) override {
    if (inner_period_cycles() > 0 && now_tsc - last_inner_tick_ >= inner_period_cycles()) {
      last_inner_tick_ = now_tsc;
      inner_->tick(view, now_tsc);
    }
    if (o_.redecide_ms > 0 && now_tsc - last_decision_tsc_ >= o_.redecide_ms * 1e-3 * hz_) redecide(view, now_tsc);
  }

  void detach(SchedulerView& view) override {
    if (inner_) inner_->detach(view);
  }
  bool holds(size_t worker) const override { return inner_ && inner_->holds(worker); }

  // A policy of another layout chosen (redecide): the run re-lays the NFs out for it, or says why it cannot.
  bool wants_relayout() const override { return !wanted_.empty(); }

  std::optional<std::vector<WorkerPlan>> planned_relayout(const Deployment& d) const override {
    return CandidateScheduler::of(wanted_mix_.empty() ? wanted_ : kPerCoreScheduler, wanted_mix_)
        .create()
        ->plan_workers(d);
  }

  void relayout_begins(const Deployment& d) override {
    policy_ = wanted_mix_.empty() ? wanted_ : kPerCoreScheduler;
    core_policies_ = wanted_mix_;
    inner_ = CandidateScheduler::of(policy_, core_policies_).create();
    wanted_event_["applied"] = true;
    decisions_.push_back(wanted_event_);
    switches_++;
    compute_family(d, last_predictions_);
    wanted_.clear();
    wanted_mix_.clear();
  }

  void relayout_refused(const std::string& why) override {
    wanted_event_["applied"] = false;
    wanted_event_["why_not"] = why;
    decisions_.push_back(wanted_event_);
    refused_.push_back(wanted_);  // not asked again: what the run refused (an NF's kind) stays so
    mix_answers_.clear();
    wanted_.clear();
    wanted_mix_.clear();
  }

  json report(const SchedulerView& view) const override {
    return {{"objective", objective_name(o_.objective)},
            {"slo_p99_us", o_.slo_p99_us ? json(*o_.slo_p99_us) : json()},
            {"policy", policy_},
            {"core_policies", to_json(core_policies_)},
            {"switchable_to", family_},
            {"relayable_to", relayable_},
            {"decisions", decisions_},
            {"policy_switches", switches_},
            {"switch_costs", to_json(o_.costs)},
            {"policy_report", inner_ ? inner_->report(view) : json::object()}};
  }

  json live_metrics(const SchedulerView& view) const override {
    json metrics = inner_ ? inner_->live_metrics(view) : json::object();
    if (!metrics.is_object()) metrics = json::object();
    metrics["totals"]["decisions_total"] = decisions_.size();
    metrics["totals"]["policy_switches_total"] = switches_;
    return metrics;
  }

 private:
  // The first decision, from the spec's rates and the measured costs: it sets the layout the run starts with (which
  // processes run which NFs).
  void decide_at_start(const Deployment& d) const {
    if (inner_) return;
    double hz = tsc_hz();
    Decision decision = start_decision(o_, d, hz);
    policy_ = decision.policy;
    core_policies_ = decision.core_policies;
    inner_ = CandidateScheduler::of(policy_, core_policies_).create();
    json event = to_json(decision);
    event["t_s"] = 0.0;
    event["measured"] = false;
    decisions_.push_back(event);

    last_predictions_ = decision.predictions;
    compute_family(d, decision.predictions);
  }

  // The policies the run can switch to live from the running one's layout: in place (the same layout, `family_`),
  // or by re-laying the NFs out (`relayable_`: where the run can start every NF again in other processes, or keep
  // it running as it does an unmodified application; not a kernel-I/O NF or a scaled one); each one the run was
  // prepared for.
  void compute_family(const Deployment& d, const std::vector<Prediction>& predictions) const {
    mix_answers_.clear();  // a switch in place: another running module
    MachineRequirements prepared = auto_requirements(o_, d);
    std::vector<WorkerPlan> layout = inner_->plan_workers(d);
    const bool can_relay_out = relaid_out(d);
    uint64_t tick_ns = inner_->tick_period_ns();
    family_ = {policy_};
    relayable_.clear();
    for (const Prediction& p : predictions) {
      // A mix per core is not among them: redecide looks whether it can reach one as the cores choose it
      // (mix_reachable).
      if (!p.feasible || p.policy == policy_ || !p.core_policies.empty() ||
          !prepared_for(CandidateScheduler(p.policy), prepared))
        continue;
      std::unique_ptr<Scheduler> other = CandidateScheduler(p.policy).create();
      // The run's own rule (run_live_changes.cc): user-level threads' processes are never switched in place.
      if (!switches_in_place(other->plan_workers(d), layout)) {
        if (can_relay_out) relayable_.push_back(p.policy);
        continue;
      }
      family_.push_back(p.policy);
      if (uint64_t period = other->tick_period_ns(); period > 0) tick_ns = tick_ns ? std::min(tick_ns, period) : period;
    }
    uint64_t redecide_ns = static_cast<uint64_t>(o_.redecide_ms * 1e6);
    if ((family_.size() > 1 || !relayable_.empty()) && redecide_ns > 0)
      tick_ns = tick_ns ? std::min(tick_ns, redecide_ns) : redecide_ns;
    else if (redecide_ns > 0 && tick_ns == 0)
      tick_ns = redecide_ns;  // to say when another layout would do better
    tick_ns_ = tick_ns;
  }

  // Whether the run can switch to `policy` live in place: the same layout as the running one's, prepared for.
  bool switchable_to(const std::string& policy) const {
    return std::find(family_.begin(), family_.end(), policy) != family_.end();
  }
  // Whether it can by re-laying the NFs out, and the run did not refuse that before.
  bool relayable_to(const std::string& policy) const {
    return std::find(relayable_.begin(), relayable_.end(), policy) != relayable_.end() &&
           std::find(refused_.begin(), refused_.end(), policy) == refused_.end();
  }
  bool reachable(const std::string& policy) const { return switchable_to(policy) || relayable_to(policy); }
  // Whether it can switch to another mix per core: each core's policy prepared for, per_core accepting the mix,
  // and its processes the running ones (in place), or the run able to re-lay the NFs out for it and not refusing
  // that before.
  // Asked at every re-decision while the cores choose a mix other than the running one; the answer holds until the
  // layout, the deployment or the refusals change (each clears mix_answers_).
  bool mix_reachable(const CorePolicies& mix, const Deployment& d) const {
    const std::string name = mix_name(mix);
    if (auto known = mix_answers_.find(name); known != mix_answers_.end()) return known->second;
    return mix_answers_[name] = mix_reachable_now(mix, d);
  }
  bool mix_reachable_now(const CorePolicies& mix, const Deployment& d) const {
    const MachineRequirements prepared = auto_requirements(o_, d);
    for (const auto& [core, policy] : mix)
      if (!prepared_for(CandidateScheduler(policy), prepared)) return false;
    if (per_core_refusal(d)(mix)) return false;
    return runs_in_place(CandidateScheduler(mix), d) ||
           (relaid_out(d) && std::find(refused_.begin(), refused_.end(), mix_name(mix)) == refused_.end());
  }
  // What a prediction goes by in decisions and the hysteresis: its policy, or its mix per core.
  static std::string name_of(const Prediction& p) {
    return p.core_policies.empty() ? p.policy : mix_name(p.core_policies);
  }
  std::string running_name() const { return core_policies_.empty() ? policy_ : mix_name(core_policies_); }

  uint64_t inner_period_cycles() const {
    uint64_t ns = inner_ ? inner_->tick_period_ns() : 0;
    return static_cast<uint64_t>(static_cast<double>(ns) * 1e-9 * hz_);
  }

  // Packets each chain has been offered so far: what its entry took or refused, and what its closed entry shed.
  std::vector<double> offers(const SchedulerView& view) const {
    std::vector<double> offered;
    for (const ChainConfig& chain : view.deployment.chains)
      offered.push_back(chain.nfs.empty() ? 0
                                          : static_cast<double>(view.arrivals(chain.nfs.front()) +
                                                                view.entry_backpressure(chain.index)));
    return offered;
  }

  void redecide(SchedulerView& view, uint64_t now_tsc) {
    if (!wanted_.empty()) return;  // a re-layout asked for, not yet begun
    std::vector<double> now = offers(view), rate(now.size(), 0);
    const double seconds = static_cast<double>(now_tsc - last_decision_tsc_) / hz_;
    for (size_t k = 0; k < now.size(); k++)
      rate[k] =
          std::max(0.0, now[k] - (k < offers_at_last_decision_.size() ? offers_at_last_decision_[k] : 0)) / seconds;
    offers_at_last_decision_ = now;
    last_decision_tsc_ = now_tsc;

    const Workload workload = workload_of(view.deployment, hz_, rate);
    Decision overall = decide(workload, o_.objective, o_.slo_p99_us, o_.costs, o_.candidates);
    // Each core under its own policy: the mix running, at the measured rates, against one policy for every core;
    // and the mix of what each core alone now chooses, where that is another the run can re-lay its NFs out for.
    if (!core_policies_.empty()) overall.predictions.push_back(predict(core_policies_, workload, o_.costs));
    CorePolicies mix = choices_per_core(workload, o_.objective, o_.slo_p99_us, o_.costs, o_.candidates);
    if (!mix.empty() && mix != core_policies_ && mix_reachable(mix, view.deployment))
      overall.predictions.push_back(predict(mix, workload, o_.costs));
    const std::string running = running_name();
    const Prediction* current = nullptr;
    const Prediction* best = nullptr;
    last_predictions_ = overall.predictions;
    for (const Prediction& p : overall.predictions) {
      const std::string name = name_of(p);
      // A mix is among the predictions only where the run can reach it; the running one is always.
      if ((p.core_policies.empty() && !reachable(p.policy)) || !p.feasible ||
          (o_.slo_p99_us && p.latency_us > *o_.slo_p99_us && name != running))
        continue;
      if (name == running) current = &p;
      if (!best || merit(p, o_.objective) > merit(*best, o_.objective)) best = &p;
    }
    const double t_s = static_cast<double>(now_tsc - start_tsc_) / hz_;
    if (!reachable(overall.policy) && overall.policy != advised_) {
      // The model would now choose a policy this run cannot switch to: said once, for the next run.
      advised_ = overall.policy;
      json event = to_json(overall);
      event.update({{"t_s", t_s},
                    {"measured", true},
                    {"offered_pps", rate},
                    {"applied", false},
                    {"why_not", overall.policy + " lays the NFs out otherwise and runs NFs the run cannot start again, "
                                                 "or the run was not prepared for it: it needs a restart"}});
      decisions_.push_back(event);
    }
    const std::string best_name = best ? name_of(*best) : "";
    if (!current || !best ||
        !hysteresis_.switch_now(running, merit(*current, o_.objective), best_name, merit(*best, o_.objective)))
      return;
    json event = {{"t_s", t_s},
                  {"measured", true},
                  {"offered_pps", rate},
                  {"applied", true},
                  {"from", running},
                  {"policy", best->policy},
                  {"reason", std::string(objective_name(o_.objective)) + ": at the measured rates " + best_name +
                                 " is predicted better than " + running + " by more than the margin, " +
                                 std::to_string(o_.confirmations) + " decisions running"},
                  {"predictions", to_json(overall)["predictions"]}};
    if (!best->core_policies.empty()) event["core_policies"] = to_json(best->core_policies);
    // Another layout, for a policy or a mix per core: the run re-lays the NFs out, then relayout_begins.
    const bool in_place = best->core_policies.empty()
                              ? switchable_to(best->policy)
                              : runs_in_place(CandidateScheduler(best->core_policies), view.deployment);
    if (!in_place) {
      event["relayout"] = true;
      wanted_ = best_name;
      wanted_mix_ = best->core_policies;
      wanted_event_ = std::move(event);
      return;
    }
    uint64_t begin = rte_get_tsc_cycles();
    inner_->detach(view);
    view.hints.neutral(view.worker_pids().size(), view.deployment.chains.size());
    const bool mixes = !core_policies_.empty() || !best->core_policies.empty();
    policy_ = best->policy;
    core_policies_ = best->core_policies;
    inner_ = CandidateScheduler::of(policy_, core_policies_).create();
    inner_->attach(view);
    event["switch_us"] = static_cast<double>(rte_get_tsc_cycles() - begin) / hz_ * 1e6;
    decisions_.push_back(event);
    switches_++;
    // per_core's policies are not the family's: its tick period and the policies reachable from it are its own (the
    // run reads the period after each tick).
    if (mixes) compute_family(view.deployment, last_predictions_);
  }

  Options o_;
  Hysteresis hysteresis_;
  // Decided in the const plan_workers (the manager plans before it attaches); kept for the run.
  mutable std::unique_ptr<Scheduler> inner_;
  mutable std::string policy_;
  mutable CorePolicies core_policies_;  // policy_ per_core: each core's candidate
  mutable json decisions_ = json::array();
  mutable std::vector<std::string> family_, relayable_;
  mutable std::vector<Prediction> last_predictions_;  // the last decision's, for the family after a re-layout
  std::vector<std::string> refused_;                  // policies (mixes by name) the run could not re-lay out for
  mutable std::map<std::string, bool> mix_answers_;   // mix_reachable's, by mix name, for the layout running now
  std::string wanted_;                                // a policy of another layout, or a mix's name, asked for
  CorePolicies wanted_mix_;                           // the mix asked for; empty: wanted_ is a policy
  json wanted_event_;                                 // its decision, recorded once the run answers
  mutable uint64_t tick_ns_ = 0;
  double hz_ = 1;
  uint64_t start_tsc_ = 0, last_decision_tsc_ = 0, last_inner_tick_ = 0;
  std::vector<double> offers_at_last_decision_;
  std::string advised_;
  int switches_ = 0;
};

void check(const Deployment& d, SpecErrors& errors) {
  Options o = Options::from(d.scheduler.options);
  const std::vector<std::string>& known = candidate_policies();
  std::string names;
  for (const std::string& name : known) names += (names.empty() ? "" : ", ") + name;
  for (const std::string& candidate : o.candidates)
    if (std::find(known.begin(), known.end(), candidate) == known.end())
      errors.push_back({"scheduler.candidates", "unknown candidate '" + candidate + "' (known: " + names + ")"});
  if (!errors.empty()) return;
  // The policy the NFs' kinds and the spec's rates point to must accept the deployment as its own check would.
  Decision decision = start_decision(o, d, tsc_hz());
  if (!decision.core_policies.empty()) return;  // per_core's check accepted the mix in the decision
  CandidateScheduler chosen(decision.policy);
  if (!chosen.type().check) return;
  Deployment trial = d;
  trial.scheduler = {chosen.name, chosen.options};
  chosen.type().check(trial, errors);
}

ArgSpec number(const char* name, double value, const char* help, double min, double max) {
  return {.name = name, .type = ArgType::Number, .default_value = value, .help = help, .min = min, .max = max};
}

const SchedulerRegistration registration({
    .name = "auto",
    .help = "Picks the scheduler: a model predicts every policy's throughput, latency, fairness and CPU for the run's "
            "NFs, costs and rates; the best for the objective runs, and auto re-decides from measured rates and "
            "switches live, with hysteresis: in place within a layout, re-laying Tandem NFs out across layouts.",
    .options =
        {
            {.name = "objective",
             .type = ArgType::Choice,
             .default_value = "throughput",
             .help = "what the choice maximises: throughput, latency (the shortest predicted wait of a packet), "
                     "fairness (Jain's index of the chains' served shares) or efficiency (packets per busy CPU "
                     "second)",
             .choices = {"throughput", "latency", "fairness", "efficiency"}},
            {.name = "candidates",
             .type = ArgType::String,
             .default_value = "",
             .help =
                 "the policies auto may choose, comma-separated (rtc, rtc-sleep, bubble, coop, unis, hybrid, nfvnice, "
                 "cfs; rtc-sleep: rtc whose worker sleeps while idle); empty: every one"},
            number("slo_p99_us", 0, "a latency bound (us): only policies predicted to meet it; 0 = none", 0, 1e7),
            number("redecide_ms", 500, "how often auto re-decides from the measured rates; 0 = at the start only", 0,
                   60000),
            number("margin", 0.1, "how much better (a fraction) another policy must be predicted to take over", 0, 10),
            {.name = "confirmations",
             .type = ArgType::Integer,
             .default_value = 3,
             .help = "decisions running in which it must be so",
             .min = 1,
             .max = 100},
            number(
                "yield_ns", 1350,
                "the model's sched_yield hand-off between processes on a core (coop); unset: this machine's, measured",
                0, 1e7),
            number("wakeup_ns", 2700,
                   "the model's sleep and wake-up of an NF process (nfvnice); unset: two of this machine's hand-offs",
                   0, 1e7),
            number("priority_switch_ns", 13000,
                   "the model's SCHED_FIFO priority switch (unis); unset: this machine's, measured", 0, 1e7),
            number("thread_switch_ns", 11,
                   "the model's user-level thread switch (bubble); unset: this machine's, measured", 0, 1e7),
            number("ring_hop_cycles", 40, "the model's enqueue and dequeue per packet between two NFs", 0, 1e6),
            number(
                "sleeper_wakeup_ns", 45000,
                "the model's wake-up of a worker asleep on an idle core (rtc-sleep); unset: this machine's, measured",
                0, 1e8),
            number("idle_handover_ns", 20000,
                   "the model's wait at low load for the running NF to hand the core on (unis's idle_handover_us)", 0,
                   1e8),
        },
    .requirements =
        [](const json&) { return MachineRequirements(MachineResource::CycleCosts).need(MachineResource::SwitchCosts); },
    .deployment_requirements =
        [](const Deployment& d) { return auto_requirements(Options::from(d.scheduler.options), d); },
    .check = check,
    .create = [](const json& options) { return std::make_unique<AutoScheduler>(Options::from(options)); },
    .external_nfs = true,
    .kernel_io_nfs = true,
});

}  // namespace
}  // namespace tandem::autosched
