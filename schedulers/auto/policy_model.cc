// auto's model: predicted throughput, latency, fairness and CPU per candidate policy, and the choice among them.
#include "policy_model.h"

#include "schedulers/per_core/core_choices.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

namespace tandem::autosched {

namespace {

constexpr double kUnbounded = std::numeric_limits<double>::infinity();
// Candidates within this fraction of the best figure are a tie, which the simpler candidate wins: the model's
// inputs (costs, switch times) are themselves measured no closer than this.
constexpr double kTie = 0.02;
// A core whose predicted load is this share of its cycles or more is saturated: its NFs take full batches.
constexpr double kSaturated = 0.98;

// How a policy divides a core between the chains that have NFs on it.
enum class Sharing {
  EqualTurns,    // every NF with input takes a batch in turn: chains get equal packet rates (rtc, coop, UNiS)
  Proportional,  // CPU follows arrival rate x cost x weight: chains get rates in proportion to their offer x weight
  FixedSlices,   // the kernel gives every runnable process its share, busy-polling or not (CFS)
};

struct PolicyTraits {
  Sharing sharing;
  bool sleeps_when_idle;  // its NFs block on an empty input, so an idle core is free (NFVnice's wake-ups)
  bool external_nfs;      // it can schedule an unmodified application's process
};

const std::map<std::string, PolicyTraits>& traits() {
  static const std::map<std::string, PolicyTraits> table = {
      {"rtc", {Sharing::EqualTurns, false, false}},      {"rtc-sleep", {Sharing::EqualTurns, true, false}},
      {"bubble", {Sharing::Proportional, false, false}}, {"coop", {Sharing::EqualTurns, false, false}},
      {"unis", {Sharing::EqualTurns, false, true}},      {"hybrid", {Sharing::EqualTurns, false, true}},
      {"nfvnice", {Sharing::Proportional, true, false}}, {"cfs", {Sharing::FixedSlices, false, true}},
  };
  return table;
}

// hybrid runs a core's native NFs in one worker: a native NF whose input comes straight from another native NF is a
// call after it (no ring), and the worker takes one turn for all of them, so only the core's first native NF (in
// the order of Workload::nfs) pays the worker's switch.
bool continues_native_run(const Workload& w, size_t i) {
  const ModelNf& nf = w.nfs[i];
  return !nf.external && nf.follows >= 0 && !w.nfs[static_cast<size_t>(nf.follows)].external;
}
bool first_native_on_core(const Workload& w, size_t i) {
  for (size_t j = 0; j < i; j++)
    if (w.nfs[j].core == w.nfs[i].core && !w.nfs[j].external) return false;
  return true;
}

// Turns of the core a packet of `chain` waits for under hybrid: one, and one more each time its path comes back to
// the native worker after an external NF (a native NF of the chain on the core that does not continue a native run
// which an earlier native NF of the chain began). Back in the worker's input, it waits for the worker's next turn:
// the worker is scheduled at its first NF's place in the chain's order, so it does not run again within the turn.
// Measured: testpmd-chain (firewall, testpmd, testpmd, ttl) had hybrid's p99 1.3x unis's in every round, native NFs
// in a row before testpmd 0.6x.
int hybrid_turns_waited(const Workload& w, int core, int chain) {
  int turns = 1;
  bool native_seen = false;
  for (size_t i = 0; i < w.nfs.size(); i++) {
    const ModelNf& nf = w.nfs[i];
    if (nf.core != core || nf.chain != chain || nf.external) continue;
    if (native_seen && !continues_native_run(w, i)) turns++;
    native_seen = true;
  }
  return turns;
}

// TSC cycles a policy adds to each packet at NF `i`, beyond the NF's own cost: its switches spread over the
// packets of a turn, and the ring between two NFs that are not one function call.
double overhead_cycles(const std::string& policy, const Workload& w, size_t i, const SwitchCosts& c) {
  const double per_ns = w.hz / 1e9;
  const double batch = std::max<uint32_t>(w.batch, 1);
  if (policy == "rtc" || policy == "rtc-sleep") return 0;  // a core's NFs of a chain: consecutive calls, one process
  if (policy == "bubble") return c.thread_switch_ns * per_ns / batch + c.ring_hop_cycles;
  if (policy == "coop") return c.yield_ns * per_ns / batch + c.ring_hop_cycles;
  if (policy == "nfvnice") return c.wakeup_ns * per_ns / batch + c.ring_hop_cycles;
  // UNiS switches when an input has gathered or its slice expired: under load a turn drains a full ring.
  const double unis_switch = c.priority_switch_ns * per_ns / std::max<uint32_t>(w.ring_capacity, 1);
  if (policy == "unis") return unis_switch + c.ring_hop_cycles;
  if (policy == "hybrid") {
    const bool switched = w.nfs[i].external || first_native_on_core(w, i);
    return (switched ? unis_switch : 0) + (continues_native_run(w, i) ? 0 : c.ring_hop_cycles);
  }
  return c.ring_hop_cycles;  // cfs: its switches come at slice ends, accounted as the slices themselves
}

// What NF `i` adds to a turn of every NF on its core, in cycles: the packets it takes and the switch that ends its
// turn. What a packet may wait for the others.
double turn_cycles(const std::string& policy, const Workload& w, size_t i, double cost, const SwitchCosts& c) {
  const double per_ns = w.hz / 1e9;
  const double batch = w.batch;
  if (policy == "rtc" || policy == "rtc-sleep") return batch * cost;
  if (policy == "bubble") return batch * (cost + c.ring_hop_cycles) + c.thread_switch_ns * per_ns;
  if (policy == "coop") return batch * (cost + c.ring_hop_cycles) + c.yield_ns * per_ns;
  if (policy == "nfvnice") return batch * (cost + c.ring_hop_cycles) + c.wakeup_ns * per_ns;
  if (policy == "unis") return w.ring_capacity * (cost + c.ring_hop_cycles) + c.priority_switch_ns * per_ns;
  if (policy == "hybrid") {
    const bool switched = w.nfs[i].external || first_native_on_core(w, i);
    return w.ring_capacity * (cost + (continues_native_run(w, i) ? 0 : c.ring_hop_cycles)) +
           (switched ? c.priority_switch_ns * per_ns : 0);
  }
  return c.cfs_slice_ms * 1e-3 * w.hz;
}

// Below saturation, the cycles a packet of `chain` spends on `core`: its NFs' own costs and rings, and the switches
// each hop waits for before the next NF runs. A polling core's round is its switches over 1 - load (a cyclic
// polling system: the round holds its switches and the packets that arrive during it), so what a hop waits for
// grows with the load until the batches fill, where the round of full batches takes over (the caller's bound).
// bench/latency_model.py sets these predictions against every policy's measured latency at three loads.
double below_saturation_cycles(const std::string& policy, const Workload& w, int core, int chain, double load,
                               double arrivals_pps, const std::vector<double>& cost, const SwitchCosts& c) {
  const double per_ns = w.hz / 1e9, spread = 1 / (1 - load);
  double path = 0;  // the NFs' own cycles, and the rings between them (what overhead_cycles counts beside switches)
  int hops = 0, on_core = 0, externals = 0;
  for (size_t i = 0; i < w.nfs.size(); i++) {
    if (w.nfs[i].core != core) continue;
    on_core++;
    if (w.nfs[i].chain != chain) continue;
    hops++;
    externals += w.nfs[i].external ? 1 : 0;
    path += cost[i];
    if (policy == "hybrid" ? !continues_native_run(w, i) : policy != "rtc" && policy != "rtc-sleep")
      path += c.ring_hop_cycles;
  }
  // A packet finds the round anywhere: half of it before its first hop, then one switch to each next NF.
  const double hop_waits = hops + on_core / 2.0;
  if (policy == "rtc") return path;  // one process polls its inputs: no switch between NFs
  if (policy == "rtc-sleep") {
    // The worker sleeps once its inputs are empty: a packet that finds it asleep waits for the wake-up, and those
    // that arrive during the wake-up wait for what is left of it (half, on average).
    const double wake_s = c.sleeper_wakeup_ns * 1e-9, during = arrivals_pps * wake_s;
    return path + wake_s * w.hz * (1 + during / 2) / (1 + during);
  }
  if (policy == "bubble") return path + hop_waits * c.thread_switch_ns * per_ns * spread;
  if (policy == "coop") return path + hop_waits * c.yield_ns * per_ns * spread;
  // The first NF is woken on an idle core (a halted vCPU), the next ones by their predecessor's core, busy.
  if (policy == "nfvnice") return path + (c.sleeper_wakeup_ns + (hops - 1) * c.wakeup_ns * spread) * per_ns;
  // UNiS hands the core on once the running NF's input stayed empty a while: each hop waits for that and the
  // priority switch; hybrid's native NFs in a row are one hop (its worker), an external NF one of its own.
  const int unis_hops = policy == "hybrid" ? hybrid_turns_waited(w, core, chain) + externals : hops;
  if (policy == "unis" || policy == "hybrid")
    return path + unis_hops * (c.idle_handover_ns + c.priority_switch_ns) * per_ns * spread;
  return kUnbounded;  // cfs: every poll-mode NF is runnable whatever its load, and takes its slice (the round)
}

// Water-filling: rates x_k = min(demand_k, level x share_k) with sum x_k work_k = capacity, or every demand met.
std::vector<double> fill(double capacity, const std::vector<double>& work, const std::vector<double>& share,
                         const std::vector<double>& demand) {
  const size_t n = work.size();
  std::vector<double> rate(n, 0);
  std::vector<bool> done(n, false);
  double left = capacity;
  for (size_t round = 0; round < n; round++) {
    double weighted = 0;  // cycles per unit of level for the chains still growing
    for (size_t k = 0; k < n; k++)
      if (!done[k]) weighted += share[k] * work[k];
    if (weighted <= 0) break;
    double level = left / weighted;
    // The chain whose demand caps it first at this level is served in full; the rest share what is left.
    size_t capped = n;
    for (size_t k = 0; k < n; k++)
      if (!done[k] && demand[k] < level * share[k] &&
          (capped == n || demand[k] / share[k] < demand[capped] / share[capped]))
        capped = k;
    if (capped == n) {
      for (size_t k = 0; k < n; k++)
        if (!done[k]) rate[k] = level * share[k];
      break;
    }
    rate[capped] = demand[capped];
    done[capped] = true;
    left -= demand[capped] * work[capped];
  }
  return rate;
}

double jain(const std::vector<double>& values) {
  double sum = 0, squares = 0;
  for (double v : values) {
    sum += v;
    squares += v * v;
  }
  return squares > 0 ? sum * sum / (static_cast<double>(values.size()) * squares) : 1;
}

std::string format(double value, int digits = 3) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*g", digits, value);
  return text;
}

}  // namespace

Objective objective_from_name(const std::string& name) {
  if (name == "throughput") return Objective::Throughput;
  if (name == "latency") return Objective::Latency;
  if (name == "fairness") return Objective::Fairness;
  if (name == "efficiency") return Objective::Efficiency;
  throw std::invalid_argument("unknown objective '" + name + "'");
}

const char* objective_name(Objective objective) {
  switch (objective) {
    case Objective::Throughput:
      return "throughput";
    case Objective::Latency:
      return "latency";
    case Objective::Fairness:
      return "fairness";
    case Objective::Efficiency:
      return "efficiency";
  }
  return "?";
}

const std::vector<std::string>& candidate_policies() {
  static const std::vector<std::string> order = {"rtc",  "rtc-sleep", "bubble",  "coop",
                                                 "unis", "hybrid",    "nfvnice", "cfs"};
  return order;
}

Prediction predict(const std::string& policy, const Workload& w, const SwitchCosts& c) {
  CorePolicies every_core;
  for (const ModelNf& nf : w.nfs) every_core[nf.core] = policy;
  traits().at(policy);  // an unknown policy is refused as it was, also without NFs
  Prediction p = predict(every_core, w, c);
  p.policy = policy;
  p.core_policies.clear();
  return p;
}

Prediction predict(const CorePolicies& policies, const Workload& w, const SwitchCosts& c) {
  Prediction p;
  p.policy = kPerCoreScheduler;
  p.core_policies = policies;
  auto policy_of = [&](int core) -> const std::string& { return policies.at(core); };
  for (const ModelNf& nf : w.nfs) {
    const PolicyTraits& t = traits().at(policy_of(nf.core));
    if (nf.kernel_io) {
      p.feasible = false;
      p.infeasible_because = "kernel-I/O NFs have no rings to take turns by";
    } else if (nf.external && !t.external_nfs) {
      p.feasible = false;
      p.infeasible_because = "it runs NFs inside Tandem's workers, and an external NF is its own program";
    }
  }
  // An NF whose cost is unknown counts as the cheapest known one: the model then errs towards more packets.
  double cheapest = kUnbounded;
  for (const ModelNf& nf : w.nfs)
    if (nf.cost_cycles > 0) cheapest = std::min(cheapest, nf.cost_cycles);
  if (cheapest == kUnbounded) cheapest = 1;
  auto cost_of = [&](const ModelNf& nf) { return nf.cost_cycles > 0 ? nf.cost_cycles : cheapest; };
  std::vector<double> cost(w.nfs.size());
  for (size_t i = 0; i < w.nfs.size(); i++) cost[i] = cost_of(w.nfs[i]);

  const size_t chains = w.chains.size();
  std::vector<double> demand(chains), chain_work(chains, 0);
  for (size_t k = 0; k < chains; k++) demand[k] = w.chains[k].offered_pps > 0 ? w.chains[k].offered_pps : kUnbounded;
  std::set<int> cores;
  for (const ModelNf& nf : w.nfs) cores.insert(nf.core);
  std::vector<double> overhead(w.nfs.size());
  for (size_t i = 0; i < w.nfs.size(); i++) overhead[i] = overhead_cycles(policy_of(w.nfs[i].core), w, i, c);

  std::vector<double> rate(chains, kUnbounded);
  std::map<int, double> saturated_round;  // per core: the turns of every NF a packet may wait for, batches full
  for (int core : cores) {
    const std::string& policy = policy_of(core);
    const PolicyTraits& t = traits().at(policy);
    std::vector<double> work(chains, 0);
    std::vector<int> nfs_here(chains, 0);
    int on_core = 0;
    double round = 0;
    for (size_t i = 0; i < w.nfs.size(); i++) {
      const ModelNf& nf = w.nfs[i];
      if (nf.core != core) continue;
      work[nf.chain] += cost_of(nf) + overhead[i];
      chain_work[nf.chain] += cost_of(nf) + overhead[i];
      nfs_here[nf.chain]++;
      on_core++;
      round += turn_cycles(policy, w, i, cost_of(nf), c);
    }
    if (policy == "rtc-sleep") round += c.sleeper_wakeup_ns * w.hz / 1e9;  // the core's one worker woken first
    int turns = 1;
    if (policy == "hybrid")
      for (size_t k = 0; k < chains; k++) turns = std::max(turns, hybrid_turns_waited(w, core, static_cast<int>(k)));
    saturated_round[core] = round * turns;
    std::vector<double> here(chains, kUnbounded);
    if (t.sharing == Sharing::FixedSlices) {
      // Each process polls for its slice whether it has packets or not, and in a slice takes at most what its input
      // ring held: a chain goes at its slowest NF's pace, and at most a ring per round of every NF's slice.
      const double per_round = w.ring_capacity / (on_core * c.cfs_slice_ms * 1e-3);
      for (const ModelNf& nf : w.nfs)
        if (nf.core == core)
          here[nf.chain] = std::min({here[nf.chain], w.hz / on_core / (cost_of(nf) + c.ring_hop_cycles), per_round});
      for (size_t k = 0; k < chains; k++) here[k] = std::min(here[k], demand[k]);
    } else {
      std::vector<double> share(chains, 1), served_work, served_share, served_demand;
      std::vector<size_t> present;
      for (size_t k = 0; k < chains; k++) {
        if (nfs_here[k] == 0) continue;
        present.push_back(k);
        double weight = w.chains[k].weight > 0 ? w.chains[k].weight : 1;
        share[k] = t.sharing == Sharing::Proportional
                       ? weight * (w.chains[k].offered_pps > 0 ? w.chains[k].offered_pps : 1.0)
                       : 1.0;
        served_work.push_back(work[k]);
        served_share.push_back(share[k]);
        served_demand.push_back(demand[k]);
      }
      // Proportional shares with some offers unknown: the unknown ones cannot be weighed against rates.
      bool any_unknown = false;
      for (size_t k : present) any_unknown = any_unknown || w.chains[k].offered_pps <= 0;
      if (t.sharing == Sharing::Proportional && any_unknown)
        for (size_t i = 0; i < present.size(); i++) served_share[i] = std::max(w.chains[present[i]].weight, 1e-9);
      std::vector<double> filled = fill(w.hz, served_work, served_share, served_demand);
      for (size_t i = 0; i < present.size(); i++) here[present[i]] = filled[i];
    }
    for (size_t k = 0; k < chains; k++) rate[k] = std::min(rate[k], here[k]);
  }
  for (size_t k = 0; k < chains; k++) {
    if (rate[k] == kUnbounded) rate[k] = 0;  // a chain with no NF on any core: nothing the policy decides
  }
  // What the cores spend on the packets the chains get (a chain limited elsewhere takes less here).
  std::map<int, double> core_busy_cycles;  // per core: the cycles a second its NFs spend on the predicted rates
  for (size_t i = 0; i < w.nfs.size(); i++) {
    const double cycles = rate[w.nfs[i].chain] * (cost[i] + overhead[i]);
    core_busy_cycles[w.nfs[i].core] += cycles;
  }
  p.chain_pps = rate;
  for (double r : rate) p.throughput_pps += r;
  // Latency at the predicted rates: each chain's wait on each core below saturation, bounded by the core's round.
  double latency_cycles = 0;
  double cpu_cycles = 0;  // what the NF cores give the NFs: a poller's core whole, a sleeper's what it uses
  for (int core : cores) {
    const std::string& policy = policy_of(core);
    double arrivals_pps = 0;
    std::set<int> chains_here;
    for (const ModelNf& nf : w.nfs)
      if (nf.core == core) chains_here.insert(nf.chain);
    for (int k : chains_here) arrivals_pps += rate[k];
    const double load = std::min(core_busy_cycles[core] / w.hz, 1.0);
    p.busiest_load = std::max(p.busiest_load, load);
    cpu_cycles += traits().at(policy).sleeps_when_idle ? load * w.hz : w.hz;
    for (int k : chains_here) {
      // A core the chains fill (an offer without bound, or more than it holds) runs full batches: the round.
      double waited =
          load < kSaturated ? below_saturation_cycles(policy, w, core, k, load, arrivals_pps, cost, c) : kUnbounded;
      latency_cycles = std::max(latency_cycles, std::min(waited, saturated_round[core]));
    }
  }
  p.latency_us = latency_cycles / w.hz * 1e6;
  const double core_count = std::max<size_t>(cores.size(), 1);
  p.cpu_share = cores.empty() ? 1.0 : std::min(1.0, cpu_cycles / (w.hz * core_count));
  p.packets_per_cpu_second = p.throughput_pps / std::max(p.cpu_share * core_count, 1e-9);
  bool all_bounded = true;
  for (double d : demand) all_bounded = all_bounded && d != kUnbounded;
  std::vector<double> served;
  for (size_t k = 0; k < chains; k++) {
    double weight = w.chains[k].weight > 0 ? w.chains[k].weight : 1;
    // Offered rates known: the share of each offer delivered; else the CPU each chain gets per unit of weight.
    served.push_back(all_bounded ? rate[k] / demand[k] / weight : rate[k] * chain_work[k] / weight);
  }
  p.jain = jain(served);
  return p;
}

std::string merit_figure(const Prediction& p, Objective objective) {
  switch (objective) {
    case Objective::Throughput:
      return format(p.throughput_pps / 1e6) + " Mpps";
    case Objective::Latency:
      return format(p.latency_us) + " us a packet";
    case Objective::Fairness:
      return "Jain " + format(p.jain);
    case Objective::Efficiency:
      return format(p.packets_per_cpu_second / 1e6) + " Mpps per busy core";
  }
  return "";
}

double merit(const Prediction& p, Objective objective) {
  switch (objective) {
    case Objective::Throughput:
      return p.throughput_pps;
    case Objective::Latency:
      return p.latency_us > 0 ? 1.0 / p.latency_us : kUnbounded;
    case Objective::Fairness:
      return p.jain;
    case Objective::Efficiency:
      return p.packets_per_cpu_second;
  }
  return 0;
}

Decision decide(const Workload& w, Objective objective, std::optional<double> slo_p99_us, const SwitchCosts& costs,
                const std::vector<std::string>& allowed) {
  Decision d;
  bool kernel_io = false, external = false;
  for (const ModelNf& nf : w.nfs) {
    kernel_io = kernel_io || nf.kernel_io;
    external = external || nf.external;
  }
  std::string first_runnable;  // the first candidate that can run these NFs, whether the spec allows it or not
  for (const std::string& policy : candidate_policies()) {
    d.predictions.push_back(predict(policy, w, costs));
    if (first_runnable.empty() && d.predictions.back().feasible) first_runnable = policy;
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), policy) == allowed.end()) {
      d.predictions.back().feasible = false;
      d.predictions.back().infeasible_because = "not among the spec's candidates";
    }
  }
  if (kernel_io) {
    d.policy = "scc";
    d.reason =
        "kernel-I/O NFs: scc is the runtime for kernel-driver NFs (longer quanta, batched system calls), and "
        "the model predicts none of the ring-watching policies for them";
    return d;
  }
  std::vector<const Prediction*> feasible;
  for (const Prediction& p : d.predictions)
    if (p.feasible) feasible.push_back(&p);
  if (feasible.empty()) {  // the spec's candidates cannot run these NFs: the first that can, saying so
    d.policy = first_runnable;
    d.reason = "none of the spec's candidates can run these NFs; " + first_runnable + " can";
    return d;
  }
  std::string constraint;
  if (slo_p99_us) {
    std::vector<const Prediction*> meeting;
    for (const Prediction* p : feasible)
      if (p->latency_us <= *slo_p99_us) meeting.push_back(p);
    if (meeting.empty()) {
      const Prediction* fastest = *std::min_element(feasible.begin(), feasible.end(),
                                                    [](auto* a, auto* b) { return a->latency_us < b->latency_us; });
      d.policy = fastest->policy;
      d.reason = "no candidate is predicted to meet the SLO of " + format(*slo_p99_us) + " us; " + d.policy +
                 " is predicted the lowest latency (" + format(fastest->latency_us) + " us)";
      return d;
    }
    if (meeting.size() < feasible.size())
      constraint = "; the SLO of " + format(*slo_p99_us) + " us rules out " +
                   std::to_string(feasible.size() - meeting.size()) + " candidate(s)";
    feasible = meeting;
  }
  double best = 0;
  for (const Prediction* p : feasible) best = std::max(best, merit(*p, objective));
  const Prediction* chosen = nullptr;
  for (const Prediction* p : feasible)  // in preference order: the first within the tie of the best
    if (!chosen && merit(*p, objective) >= best * (1 - kTie)) chosen = p;
  const Prediction* runner_up = nullptr;
  for (const Prediction* p : feasible)
    if (p != chosen && (!runner_up || merit(*p, objective) > merit(*runner_up, objective))) runner_up = p;
  d.policy = chosen->policy;
  auto figure = [&](const Prediction& p) { return merit_figure(p, objective); };
  d.reason = std::string(objective_name(objective)) + ": " + d.policy + " is predicted " + figure(*chosen);
  if (runner_up) d.reason += ", the next best " + runner_up->policy + " " + figure(*runner_up);
  if (external) d.reason += "; an external NF leaves only the policies that schedule processes from outside";
  d.reason += constraint;
  return d;
}

nlohmann::json to_json(const CorePolicies& policies) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [core, policy] : policies) out[std::to_string(core)] = policy;
  return out;
}

nlohmann::json to_json(const Prediction& p) {
  nlohmann::json out = {{"policy", p.policy}, {"feasible", p.feasible}};
  if (!p.core_policies.empty()) out["core_policies"] = to_json(p.core_policies);
  if (!p.feasible) {
    out["infeasible_because"] = p.infeasible_because;
    return out;
  }
  out.update({{"throughput_pps", p.throughput_pps},
              {"chain_pps", p.chain_pps},
              {"latency_us", p.latency_us},
              {"busiest_load", p.busiest_load},
              {"jain", p.jain},
              {"cpu_share", p.cpu_share},
              {"packets_per_cpu_second", p.packets_per_cpu_second}});
  return out;
}

nlohmann::json to_json(const SwitchCosts& c) {
  return {{"yield_ns", c.yield_ns},
          {"wakeup_ns", c.wakeup_ns},
          {"priority_switch_ns", c.priority_switch_ns},
          {"thread_switch_ns", c.thread_switch_ns},
          {"ring_hop_cycles", c.ring_hop_cycles},
          {"sleeper_wakeup_ns", c.sleeper_wakeup_ns},
          {"idle_handover_ns", c.idle_handover_ns}};
}

nlohmann::json to_json(const Decision& d) {
  nlohmann::json predictions = nlohmann::json::array();
  for (const Prediction& p : d.predictions) predictions.push_back(to_json(p));
  nlohmann::json out = {{"policy", d.policy}, {"reason", d.reason}, {"predictions", predictions}};
  if (!d.core_policies.empty()) out["core_policies"] = to_json(d.core_policies);
  return out;
}

}  // namespace tandem::autosched
