// auto's choice per core: each NF core decided alone, and the mix of those choices set against one candidate.
#include "core_decision.h"

#include <algorithm>
#include <map>
#include <set>

#include "schedulers/per_core/core_choices.h"

namespace tandem::autosched {

Workload core_part(const Workload& w, int core) {
  Workload part;
  part.batch = w.batch;
  part.ring_capacity = w.ring_capacity;
  part.hz = w.hz;
  std::map<int, int> chain_index, nf_index;  // the whole run's -> the part's
  int count = 0;
  for (size_t i = 0; i < w.nfs.size(); i++)
    if (w.nfs[i].core == core) nf_index[static_cast<int>(i)] = count++;
  for (const auto& [i, _] : nf_index) {
    ModelNf nf = w.nfs[static_cast<size_t>(i)];
    if (!chain_index.count(nf.chain)) {
      chain_index[nf.chain] = static_cast<int>(part.chains.size());
      part.chains.push_back(w.chains.at(static_cast<size_t>(nf.chain)));
    }
    nf.chain = chain_index[nf.chain];
    nf.follows = nf_index.count(nf.follows) ? nf_index[nf.follows] : -1;  // its feeder, where that is on the core
    part.nfs.push_back(nf);
  }
  return part;
}

namespace {

std::string listed(const CorePolicies& policies) {
  std::string text;
  for (const auto& [core, policy] : policies)
    text += (text.empty() ? "" : ", ") + std::string("core ") + std::to_string(core) + " " + policy;
  return text;
}

const Prediction* prediction_of(const Decision& decision) {
  for (const Prediction& p : decision.predictions)
    if (p.policy == decision.policy) return &p;
  return nullptr;
}

}  // namespace

CorePolicies choices_per_core(const Workload& w, Objective objective, std::optional<double> slo_p99_us,
                              const SwitchCosts& costs, const std::vector<std::string>& allowed) {
  std::set<int> cores;
  for (const ModelNf& nf : w.nfs) {
    if (nf.kernel_io) return {};  // scc runs them, whose model there is not
    cores.insert(nf.core);
  }
  if (cores.size() < 2) return {};
  CorePolicies best_of_core;
  for (int core : cores) best_of_core[core] = decide(core_part(w, core), objective, slo_p99_us, costs, allowed).policy;
  std::set<std::string> distinct;
  for (const auto& [core, policy] : best_of_core) distinct.insert(policy);
  if (distinct.size() < 2) return {};  // every core alone chooses what the whole run does, or one policy anyway
  return best_of_core;
}

std::string mix_name(const CorePolicies& policies) {
  return std::string(kPerCoreScheduler) + " (" + listed(policies) + ")";
}

Decision decide_per_core(const Workload& w, Objective objective, std::optional<double> slo_p99_us,
                         const SwitchCosts& costs, const std::vector<std::string>& allowed, double margin,
                         const MixRefusal& refusal) {
  Decision whole = decide(w, objective, slo_p99_us, costs, allowed);
  const Prediction* chosen = prediction_of(whole);
  if (!chosen || !chosen->feasible) return whole;
  CorePolicies best_of_core = choices_per_core(w, objective, slo_p99_us, costs, allowed);
  if (best_of_core.empty()) return whole;

  Prediction mix = predict(best_of_core, w, costs);
  const std::string said = "; each core alone would choose " + listed(best_of_core);
  if (!mix.feasible) return whole;
  if (slo_p99_us && mix.latency_us > *slo_p99_us && chosen->latency_us <= *slo_p99_us) {
    whole.reason += said + ", predicted " + merit_figure(mix, Objective::Latency) + ", past the SLO";
    return whole;
  }
  // Meeting the SLO comes first: a mix that meets it where one policy cannot is taken whatever its merit.
  const bool mix_meets_what_one_cannot =
      slo_p99_us && mix.latency_us <= *slo_p99_us && chosen->latency_us > *slo_p99_us;
  if (!mix_meets_what_one_cannot && merit(mix, objective) <= merit(*chosen, objective) * (1 + margin)) {
    whole.reason += said + ", predicted " + merit_figure(mix, objective) + ": not better by the margin (" +
                    std::to_string(static_cast<int>(margin * 100 + 0.5)) + " %)";
    return whole;
  }
  if (std::optional<std::string> why = refusal ? refusal(best_of_core) : std::nullopt) {
    whole.reason += said + ", predicted " + merit_figure(mix, objective) + ", but per_core refused it: " + *why;
    return whole;
  }
  Decision d = whole;
  d.policy = kPerCoreScheduler;
  d.core_policies = best_of_core;
  d.reason = std::string(objective_name(objective)) + ": each core its own policy (" + listed(best_of_core) +
             ") is predicted " + merit_figure(mix, objective) + ", one policy at best " + whole.policy + " " +
             merit_figure(*chosen, objective);
  d.predictions.push_back(mix);
  return d;
}

}  // namespace tandem::autosched
