// μNF's auto-scaling (IV-E) in the manager, and scale-in beyond the paper: drops at a scaled NF's input rings that
// persist over a window give it one more instance; instances whose work fits in one fewer over a longer window
// give one back. Each decision waits until the last took effect at the scaled egress, and for a cool-down.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "contract/deployment.h"
#include "contract/shm_layout.h"

namespace tandem {

// A scaled NF at one instant, as the manager reads it.
struct ScaleObservation {
  double t_s = 0;
  uint64_t dropped = 0;   // packets dropped at its instances' input rings since the start
  double busy_share = 0;  // the instances in use, their time inside the NF over the last interval summed (1: a core)
  uint32_t in_use = 1;    // instances its scaled egress spreads flows over now
};

struct ScaleDecision {
  int change = 0;  // +1: one more instance; -1: one fewer; 0: none
  std::string reason;
  uint64_t drops = 0;  // a scale-out's: packets dropped at the input over its window
};

// The decision rule alone, on a series of observations (unit-tested on synthetic series).
class ScalingRule {
 public:
  ScalingRule(const ScaleConfig& config, uint32_t max_instances) : config_(config), max_(max_instances) {}
  // The decision `now` calls for, not yet made: a rule whose proposal is not committed proposes again later.
  ScaleDecision propose(const ScaleObservation& now);
  void commit(const ScaleDecision& decision);
  // A count asked for by command (1..max): taken as a decision is, its effect awaited alike.
  void ask(uint32_t instances);
  // The egresses start again (new processes, a re-layout): the count stays, its effect awaited as a change's, and
  // judged afresh from then on (the windows begun before, over the re-layout's hold, are dropped).
  void await_egresses();
  // propose and commit.
  ScaleDecision observe(const ScaleObservation& now);
  uint32_t wanted() const { return wanted_; }
  bool pending() const { return pending_; }
  const ScaleConfig& config() const { return config_; }

 private:
  ScaleConfig config_;
  uint32_t max_;
  uint32_t wanted_ = 1;
  bool pending_ = false;                  // a change asked for that the egress has not made yet
  std::optional<double> took_effect_at_;  // the last change, when the egress made it (the cool-down's start)
  std::optional<double> dropping_since_;  // start of the run of intervals each with drops
  uint64_t dropped_at_start_ = 0;
  double last_drop_at_ = 0;
  std::optional<double> idle_since_;  // start of the run of intervals whose work fitted in one fewer
  uint64_t last_dropped_ = 0;
  double last_t_ = 0;
};

// Of the decisions proposed in one chain at once, the one to make: the scale-out with the most drops over its
// window (an instance added upstream changes what reaches the NFs after it, so they are judged again after the
// cool-down), else the first scale-in; -1 for none.
int pick_decision(const std::vector<ScaleDecision>& proposals);

// Every scaled NF of a deployment: observed from the stats zone at each call, its egresses told how many instances
// to use, its decisions and a timeline kept for the results. One decision at a time per chain: none while a change
// in the chain is not made yet or within the cool-down after it.
class Autoscaler {
 public:
  Autoscaler(const Deployment& deployment, StatsZone& stats, double tsc_hz);
  bool empty() const { return groups_.empty(); }
  // Every change asked for is made and no scaled egress holds packets.
  bool settled() const;
  // Observes every scaled NF at `t_s` (seconds since go); returns the events of the decisions made now.
  std::vector<json> tick(uint64_t now_tsc, double t_s);
  json report() const;
  // An operator's command: NF `name` (a scaled NF's first instance) on `instances` instances from now on, its rule
  // paused until the command says `auto` (nullopt) again. Returns the refusal (the command's field and why), or
  // nullopt once asked for, with the decision's `event` where the count changes.
  struct Refusal {
    std::string field, reason;
  };
  std::optional<Refusal> command(const std::string& name, std::optional<uint32_t> instances, double t_s, json* event);
  // A chain added to a service, now in the deployment: its scaled NFs are observed and decided on from now, each
  // on its first instance (as at the start).
  void add_chain(int chain);
  // A chain removed from a service: its scaled NFs are observed and decided on no more.
  void forget_chain(int chain);
  // The NFs were re-laid out (new processes, new egresses that spread flows over one instance until they read the
  // count): every scaled NF's count awaited again, its rule judging afresh from then on. The run does not tick the
  // autoscaler while a re-layout is under way: its hold, no traffic, would read as idle instances.
  void relaid_out();
  // The instances NF `name`'s feeders spread flows over now, and whether that is the count last asked for.
  uint32_t in_use_of(const std::string& name, bool* made) const;

 private:
  struct Group {
    const NfConfig* nf;  // instance 1
    ScalingRule rule;
    bool by_command = false;            // its count set by an operator: the rule proposes nothing until `auto`
    bool forgotten = false;             // its chain was removed
    size_t feeders = 1;                 // scaled egresses that feed it (scale_feeders)
    std::vector<uint64_t> work_cycles;  // per instance, at the last tick (NfCounters::work_cycles)
    uint64_t last_tsc = 0;
    std::vector<json> events;
    json timeline = json::array();
    double next_sample_s = 0;
    uint64_t arrived_at_sample = 0, processed_at_sample = 0, dropped_at_sample = 0;
    double sample_t_s = 0;
  };
  // Observes `nf` from now if it is a scaled NF's first instance.
  void follow(const NfConfig& nf);
  void wake_worker_of(int nf);
  // The index of scaled NF `name`'s group in groups_, or -1.
  int group_named(const std::string& name) const;
  // The instances every feeder spreads flows over now; `made`: all of them follow the rule's wanted count.
  uint32_t in_use(const Group& group, bool* made = nullptr) const;
  std::vector<double> chain_settled_at_;  // per chain: when its last change was made (cool-down); < 0: none yet
  const Deployment& deployment_;
  StatsZone& stats_;
  double hz_;
  std::vector<Group> groups_;
};

}  // namespace tandem
