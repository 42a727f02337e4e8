// The autoscaler's rule on observations, and the manager's side of it: counters read, instances asked for, events kept.
#include "autoscaler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "contract/idle_wait.h"

namespace tandem {

namespace {

std::string milliseconds(double seconds) {
  return std::to_string(static_cast<long>(std::lround(seconds * 1e3))) + " ms";
}

}  // namespace

ScaleDecision ScalingRule::propose(const ScaleObservation& now) {
  bool drops = now.dropped > last_dropped_;
  double interval_start = last_t_;
  uint64_t dropped_before = last_dropped_;
  last_dropped_ = now.dropped;
  last_t_ = now.t_s;
  if (pending_) {  // the egress moves flows only once their old instances are done with them
    if (now.in_use != wanted_) return {};
    pending_ = false;
    took_effect_at_ = now.t_s;
    dropping_since_.reset();
    idle_since_.reset();
    return {};
  }
  // Drops persist while no gap between them exceeds a quarter of the window: the upstream NF may itself run in
  // slices (a CFS slice is milliseconds), so a short interval without drops does not end them.
  if (drops) {
    if (!dropping_since_) {
      dropping_since_ = interval_start;
      dropped_at_start_ = dropped_before;
    }
    last_drop_at_ = now.t_s;
  } else if (dropping_since_ && now.t_s - last_drop_at_ > config_.window_s / 4 + 1e-6) {
    dropping_since_.reset();
  }
  bool fits_in_fewer = !drops && wanted_ > 1 && now.busy_share < config_.idle_below * (wanted_ - 1);
  if (fits_in_fewer && !idle_since_) idle_since_ = interval_start;
  if (!fits_in_fewer) idle_since_.reset();
  bool cooled = !took_effect_at_ || now.t_s - *took_effect_at_ >= config_.cooldown_s;
  // A tolerance of a microsecond: observations come at whole ticks, and a window of ticks should count as full.
  if (dropping_since_ && now.t_s - *dropping_since_ >= config_.window_s - 1e-6 && cooled && wanted_ < max_) {
    std::string reason = std::to_string(now.dropped - dropped_at_start_) +
                         " packets dropped at its input over the last " + milliseconds(now.t_s - *dropping_since_);
    return {+1, reason, now.dropped - dropped_at_start_};
  }
  if (idle_since_ && now.t_s - *idle_since_ >= config_.idle_s - 1e-6 && cooled) {
    char share[64];
    std::snprintf(share, sizeof share, "%.2f", now.busy_share);
    std::string reason = "its " + std::to_string(wanted_) + " instances were busy " + share +
                         " of a core in all, no drops, for " + milliseconds(now.t_s - *idle_since_);
    return {-1, reason, 0};
  }
  return {};
}

void ScalingRule::commit(const ScaleDecision& decision) {
  if (decision.change == 0) return;
  wanted_ = decision.change > 0 ? wanted_ + 1 : wanted_ - 1;
  await_egresses();
}

void ScalingRule::ask(uint32_t instances) {
  if (instances == wanted_) return;
  wanted_ = instances;
  await_egresses();
}

void ScalingRule::await_egresses() {
  pending_ = true;
  dropping_since_.reset();
  idle_since_.reset();
}

ScaleDecision ScalingRule::observe(const ScaleObservation& now) {
  ScaleDecision decision = propose(now);
  commit(decision);
  return decision;
}

int pick_decision(const std::vector<ScaleDecision>& proposals) {
  int best = -1;
  for (size_t i = 0; i < proposals.size(); i++) {
    const ScaleDecision& p = proposals[i];
    if (p.change > 0 && (best < 0 || proposals[best].change < 0 || p.drops > proposals[best].drops))
      best = static_cast<int>(i);
    if (p.change < 0 && best < 0) best = static_cast<int>(i);
  }
  return best;
}

Autoscaler::Autoscaler(const Deployment& deployment, StatsZone& stats, double tsc_hz)
    : deployment_(deployment), stats_(stats), hz_(tsc_hz), chain_settled_at_(deployment.chains.size(), -1.0) {
  for (const NfConfig& nf : deployment.nfs) follow(nf);
}

void Autoscaler::follow(const NfConfig& nf) {
  if (!nf.scale) return;
  Group group{.nf = &nf,
              .rule = ScalingRule(*nf.scale, static_cast<uint32_t>(nf.scale->instances.size())),
              .feeders = scale_feeders(deployment_, nf.index).size()};
  group.work_cycles.assign(nf.scale->instances.size(), 0);
  flag_store(stats_.scale[nf.index].wanted, 1u);
  groups_.push_back(std::move(group));
}

void Autoscaler::add_chain(int chain) {
  chain_settled_at_.resize(deployment_.chains.size(), -1.0);
  for (int nf : deployment_.chains.at(static_cast<size_t>(chain)).nfs) follow(deployment_.nfs[static_cast<size_t>(nf)]);
}

void Autoscaler::relaid_out() {
  for (Group& group : groups_) {
    if (group.forgotten) continue;
    group.rule.await_egresses();
    group.last_tsc = 0;  // the next tick reads the counters afresh: no busy share over the re-layout
  }
}

uint32_t Autoscaler::in_use(const Group& group, bool* made) const {
  const ScaleControl& control = stats_.scale[group.nf->index];
  // Until every feeder made the change, the count some feeder still spreads over.
  uint32_t lagging = group.rule.wanted();
  for (size_t f = 0; f < group.feeders; f++)
    if (uint32_t n = std::max(1u, flag_load(control.feeders[f].in_use)); n != group.rule.wanted()) lagging = n;
  if (made) *made = lagging == group.rule.wanted();
  return lagging;
}

// The timeline's samples: every 50 ms, what reached the scaled NF, what its instances took and what was dropped.
constexpr double kTimelineStep = 0.05;

std::vector<json> Autoscaler::tick(uint64_t now_tsc, double t_s) {
  // 1. Every scaled NF observed; its rule proposes.
  std::vector<ScaleDecision> proposals(groups_.size());
  for (size_t g = 0; g < groups_.size(); g++) {
    Group& group = groups_[g];
    if (group.forgotten) continue;
    const std::vector<int>& instances = group.nf->scale->instances;
    uint32_t using_now = in_use(group);
    double busy = 0;
    uint64_t arrived = 0, processed = 0, drops = 0;  // drops: at its instances' input rings
    for (size_t k = 0; k < instances.size(); k++) {
      const NfCounters& counters = stats_.nfs[instances[k]];
      uint64_t cycles = counter_read(counters.work_cycles);  // a CFS slice lost mid-batch is no sign of load
      if (k < using_now && group.last_tsc != 0 && now_tsc > group.last_tsc)
        busy += static_cast<double>(cycles - group.work_cycles[k]) / static_cast<double>(now_tsc - group.last_tsc);
      group.work_cycles[k] = cycles;
      processed += counter_read(counters.packets_in);
      for (int ring : deployment_.nfs[instances[k]].in_rings) {
        uint64_t refused = counter_read(stats_.rings[ring].dropped_full);
        arrived += counter_read(stats_.rings[ring].enqueued) + refused;
        drops += refused;
      }
    }
    bool first = group.last_tsc == 0;
    group.last_tsc = now_tsc;
    bool was_pending = group.rule.pending();
    if (!first) proposals[g] = group.rule.propose({t_s, drops, busy, using_now});
    if (group.by_command) proposals[g] = {};
    // The last change, once every egress made it: the chain's cool-down starts.
    if (was_pending && !group.rule.pending()) {
      group.events.back()["took_effect_s"] = t_s;
      chain_settled_at_[group.nf->chain] = t_s;
    }
    if (t_s >= group.next_sample_s) {
      double span = t_s - group.sample_t_s;
      if (span > 0 && group.sample_t_s > 0)
        group.timeline.push_back({{"t_s", t_s},
                                  {"instances", using_now},
                                  {"arrived_pps", static_cast<double>(arrived - group.arrived_at_sample) / span},
                                  {"processed_pps", static_cast<double>(processed - group.processed_at_sample) / span},
                                  {"dropped_pps", static_cast<double>(drops - group.dropped_at_sample) / span}});
      group.arrived_at_sample = arrived;
      group.processed_at_sample = processed;
      group.dropped_at_sample = drops;
      group.sample_t_s = t_s;
      group.next_sample_s = t_s + kTimelineStep;
    }
  }
  // 2. Per chain, one of its proposals made, unless a change of the chain is still being made or cooling down.
  std::vector<json> events;
  for (const ChainConfig& chain : deployment_.chains) {
    std::vector<size_t> members;
    std::vector<ScaleDecision> chain_proposals;
    bool busy = false;
    for (size_t g = 0; g < groups_.size(); g++) {
      if (groups_[g].nf->chain != chain.index) continue;
      busy = busy || groups_[g].rule.pending() ||
             (chain_settled_at_[chain.index] >= 0 &&
              t_s - chain_settled_at_[chain.index] < groups_[g].rule.config().cooldown_s);
      members.push_back(g);
      chain_proposals.push_back(proposals[g]);
    }
    int pick = busy ? -1 : pick_decision(chain_proposals);
    if (pick < 0) continue;
    Group& group = groups_[members[static_cast<size_t>(pick)]];
    const ScaleDecision& decision = chain_proposals[static_cast<size_t>(pick)];
    group.rule.commit(decision);
    uint32_t wanted = group.rule.wanted();
    const NfConfig& changed = deployment_.nfs[group.nf->scale->instances[decision.change > 0 ? wanted - 1 : wanted]];
    flag_store(stats_.scale[group.nf->index].wanted, wanted);
    if (decision.change > 0) wake_worker_of(changed.index);  // a parked spare: before an egress sends it flows
    json event = {{"t_s", t_s},
                  {"nf", group.nf->name},
                  {"change", decision.change > 0 ? "out" : "in"},
                  {"instances", wanted},
                  {"instance", changed.name},
                  {"core", changed.core},
                  {"reason", decision.reason},
                  {"took_effect_s", nullptr}};
    group.events.push_back(event);
    events.push_back(event);
  }
  return events;
}

void Autoscaler::wake_worker_of(int nf) {
  for (const WorkerPlan& plan : deployment_.workers)
    for (const Segment& segment : plan.segments)
      if (std::find(segment.nfs.begin(), segment.nfs.end(), nf) != segment.nfs.end())
        idle_wake(stats_.workers[plan.index]);
}

int Autoscaler::group_named(const std::string& name) const {
  for (size_t g = 0; g < groups_.size(); g++)
    if (groups_[g].nf->name == name) return static_cast<int>(g);
  return -1;
}

std::optional<Autoscaler::Refusal> Autoscaler::command(const std::string& name, std::optional<uint32_t> instances,
                                                       double t_s, json* event) {
  int index = group_named(name);
  if (index < 0)
    return Refusal{"nf", "'" + name + "' is not scaled: give it `scale:` in the spec, which prepares its instances"};
  Group* group = &groups_[static_cast<size_t>(index)];
  uint32_t most = static_cast<uint32_t>(group->nf->scale->instances.size());
  if (instances && (*instances < 1 || *instances > most))
    return Refusal{"instances", "between 1 and its max_instances (" + std::to_string(most) + ")"};
  if (group->rule.pending())
    return Refusal{"instances", "its instance count is being changed (to " + std::to_string(group->rule.wanted()) +
                                    "): ask again once that took effect"};
  group->by_command = instances.has_value();
  if (!instances || *instances == group->rule.wanted()) return std::nullopt;
  uint32_t before = group->rule.wanted();
  group->rule.ask(*instances);
  flag_store(stats_.scale[group->nf->index].wanted, *instances);
  // Spares parked on an empty input: awake before an egress sends them flows.
  for (uint32_t k = before; k < *instances; k++) wake_worker_of(group->nf->scale->instances[k]);
  // The instances that start or stop taking flows, and their cores (one, as a rule).
  std::string changed, cores;
  std::set<int> seen_cores;
  for (uint32_t k = std::min(before, *instances); k < std::max(before, *instances); k++) {
    const NfConfig& instance = deployment_.nfs[group->nf->scale->instances[k]];
    changed += (changed.empty() ? "" : ",") + instance.name;
    if (seen_cores.insert(instance.core).second) cores += (cores.empty() ? "" : ",") + std::to_string(instance.core);
  }
  group->events.push_back({{"t_s", t_s},
                           {"nf", name},
                           {"change", *instances > before ? "out" : "in"},
                           {"by", "command"},
                           {"instances", *instances},
                           {"instance", changed},
                           {"core", cores},
                           {"reason", "asked by command (the rule waits until the command says auto)"},
                           {"took_effect_s", nullptr}});
  *event = group->events.back();
  return std::nullopt;
}

uint32_t Autoscaler::in_use_of(const std::string& name, bool* made) const {
  int index = group_named(name);
  if (index >= 0) return in_use(groups_[static_cast<size_t>(index)], made);
  if (made) *made = true;
  return 1;
}

void Autoscaler::forget_chain(int chain) {
  for (Group& group : groups_)
    if (group.nf->chain == chain) group.forgotten = true;
}

bool Autoscaler::settled() const {
  for (const Group& group : groups_) {
    if (group.forgotten) continue;
    bool made = false;
    in_use(group, &made);
    if (!made) return false;
    for (size_t f = 0; f < group.feeders; f++)
      if (counter_read(stats_.scale[group.nf->index].feeders[f].held_now) > 0) return false;
  }
  return true;
}

json Autoscaler::report() const {
  json groups = json::array();
  for (const Group& group : groups_) {
    const ScaleConfig& config = *group.nf->scale;
    const ScaleControl& control = stats_.scale[group.nf->index];
    json instances = json::array();
    for (int instance : config.instances)
      instances.push_back({{"name", deployment_.nfs[instance].name}, {"core", deployment_.nfs[instance].core}});
    // Each feeder's egress makes every change for its flows: a change is made once all of them made it.
    uint64_t switches = UINT64_MAX, held_peak = 0, held_dropped = 0;
    // What a feeder's hold takes: alike for every feeder (one ring from each into each instance, and a chain has
    // one ring capacity); the least, should that change. A held packet is dropped only where the hold is full.
    unsigned hold_capacity = std::numeric_limits<unsigned>::max();
    for (int feeder : scale_feeders(deployment_, group.nf->index))
      hold_capacity = std::min(hold_capacity, scaled_hold_capacity(deployment_, group.nf->index, feeder));
    for (size_t f = 0; f < group.feeders; f++) {
      switches = std::min(switches, counter_read(control.feeders[f].switches));
      held_peak = std::max(held_peak, counter_read(control.feeders[f].held_peak));
      held_dropped += counter_read(control.feeders[f].held_dropped);
    }
    groups.push_back({{"nf", group.nf->name},
                      {"instances", instances},
                      {"feeders", group.feeders},
                      {"rule",
                       {{"window_ms", config.window_s * 1e3},
                        {"cooldown_ms", config.cooldown_s * 1e3},
                        {"idle_ms", config.idle_s * 1e3},
                        {"idle_below", config.idle_below}}},
                      {"in_use_at_end", in_use(group)},
                      {"count_by_command_at_end", group.by_command},
                      {"switches", switches},
                      {"held_peak", held_peak},
                      {"hold_capacity", hold_capacity},
                      {"held_dropped", held_dropped},
                      {"events", group.events},
                      {"timeline", group.timeline}});
  }
  return groups;
}

}  // namespace tandem
