// auto's model: each candidate policy's predicted throughput, latency, fairness and CPU for a run's NFs, and the
// choice.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tandem::autosched {

enum class Objective { Throughput, Latency, Fairness, Efficiency };
Objective objective_from_name(const std::string& name);  // throws std::invalid_argument on an unknown name
const char* objective_name(Objective objective);

// What the model knows of one NF: where it runs, what a packet costs it, and what kind of program it is.
struct ModelNf {
  int chain = 0;
  int core = 0;
  double cost_cycles = 0;  // measured TSC cycles per packet (0: unknown, taken as the cheapest known)
  bool external = false;   // an unmodified application in its own process: only schedulers from outside run it
  bool kernel_io = false;  // a kernel-I/O NF: blocks in poll(), fed by packet sockets, not rings
  // The NF (its index in Workload::nfs) whose only output is this NF's only input, on the same core: the two can be
  // consecutive calls in one worker (rtc's segments, hybrid's native worker); -1: none.
  int follows = -1;
};

struct ModelChain {
  double offered_pps = 0;  // the chain's offered rate; 0 = as fast as the generator can (demand without bound)
  double weight = 1;       // its priority weight, for the policies that share by weight
};

// What a switch between NFs costs each policy: options of the module, whose defaults are the facts measured on our
// machines (../DESIGN.md's table); the control plane fills those a spec leaves unset with this machine's own
// switches, measured once and cached (tandem-primitives --switch-costs, controlplane/machine/switch_costs.py).
struct SwitchCosts {
  double yield_ns = 1350;             // a sched_yield hand-off between two processes on one core (coop)
  double wakeup_ns = 2700;            // an NF put to sleep and woken by the manager: two hand-offs (NFVnice)
  double priority_switch_ns = 13000;  // a SCHED_FIFO priority switch, until the other NF runs (UNiS)
  double thread_switch_ns = 11;       // a Boost.Context switch between user-level threads (Bubble)
  double ring_hop_cycles = 40;        // an enqueue and a dequeue per packet between two NFs that are not one call
  double cfs_slice_ms = 3;            // what CFS gives a runnable poll-mode process before the next (latency)
  // A sleeping worker woken for a packet (rtc's idle: sleep): a futex wake-up on a core idle about a millisecond, as
  // `./tandem primitives` measures it (41-51 us on our KVM guests: the host runs the halted vCPU again; longer
  // after longer idle spells), the manager's look every 1 us aside.
  double sleeper_wakeup_ns = 45000;
  // UNiS at low load: how long the running NF's input stays empty before it hands the core to an NF with a packet
  // (unis's idle_handover_us): what each hop of a packet waits for there, beside the priority switch.
  double idle_handover_ns = 20000;
};

struct Workload {
  std::vector<ModelNf> nfs;
  std::vector<ModelChain> chains;
  uint32_t batch = 32;            // the run's burst: packets an NF takes per turn
  uint32_t ring_capacity = 1024;  // an NF's input: what UNiS lets gather before it switches
  double hz = 0;                  // TSC cycles per second
};

// Each NF core's policy, where the cores run different ones (per_core).
using CorePolicies = std::map<int, std::string>;

// One candidate's predictions for the whole run (chains that cross cores get the least any of their cores gives).
struct Prediction {
  std::string policy;          // a candidate, or per_core with `core_policies`
  CorePolicies core_policies;  // per_core: each core's candidate; empty: `policy` runs every core
  bool feasible = true;
  std::string infeasible_because;  // when not feasible
  double throughput_pps = 0;       // delivered, summed over chains
  std::vector<double> chain_pps;   // per chain
  // What a packet waits for, on the core where it waits longest: below saturation its path's NFs and the switches
  // its hops wait for, spread by the core's load; saturated, the turns of every NF on the core (the round).
  double latency_us = 0;
  double busiest_load = 0;            // the busiest core's predicted share of its cycles spent on packets
  double jain = 1;                    // Jain's index over the chains' served shares (delivered / offered / weight)
  double cpu_share = 1;               // of the NF cores, averaged: pollers take all of it, sleepers what they use
  double packets_per_cpu_second = 0;  // throughput / (cpu_share x cores): efficiency
};

struct Decision {
  std::string policy;
  CorePolicies core_policies;  // policy per_core: each core's candidate
  std::string reason;
  std::vector<Prediction> predictions;  // every candidate, feasible or not, in the order of preference on ties
};

// The candidates in the order preferred on a tie: simplest and cheapest to run first. Each is a scheduler, or
// "rtc-sleep": rtc whose worker sleeps while its inputs are empty (rtc's option idle: sleep).
const std::vector<std::string>& candidate_policies();

Prediction predict(const std::string& policy, const Workload& workload, const SwitchCosts& costs);
// Each core under its own candidate: a chain across cores gets the least any of its cores gives, its wait is the
// longest any of them makes it wait. Every NF core of `workload` must have a policy.
Prediction predict(const CorePolicies& policies, const Workload& workload, const SwitchCosts& costs);

// The feasible candidate best for `objective`; with a p99 SLO, only those predicted to meet it (or, if none is,
// the one with the lowest latency, saying so). Kernel-I/O NFs go to scc, which the model does not predict.
// `allowed`: the candidates the spec lets auto choose from (empty: every one); the others are predicted too, and
// marked infeasible.
Decision decide(const Workload& workload, Objective objective, std::optional<double> slo_p99_us,
                const SwitchCosts& costs, const std::vector<std::string>& allowed = {});

// The objective's figure of merit for a prediction: larger is better.
double merit(const Prediction& prediction, Objective objective);
// That figure as a reason says it ("1.2 Mpps", "35 us a packet", "Jain 0.98", ...).
std::string merit_figure(const Prediction& prediction, Objective objective);

nlohmann::json to_json(const CorePolicies& policies);  // {"1": "unis", "2": "rtc"}
nlohmann::json to_json(const Prediction& prediction);
nlohmann::json to_json(const Decision& decision);
nlohmann::json to_json(const SwitchCosts& costs);  // the options' names: what a run's model charged

}  // namespace tandem::autosched
