// NFVnice's weights: each NF's cgroup cpu.shares in proportion to priority x arrival rate x cost, per core.
#pragma once

#include <cstdint>
#include <vector>

namespace tandem::nfvnice {

// Limits the kernel enforces on cgroup v1 cpu.shares, and its default.
inline constexpr uint64_t kMinShares = 2;
inline constexpr uint64_t kMaxShares = 262144;
inline constexpr uint64_t kDefaultShares = 1024;

struct NfDemand {
  int core = 0;
  double weight = 1;       // priority weight from the spec
  double rate_pps = 0;     // smoothed arrival rate
  double cost_cycles = 0;  // per-packet service time; 0 = not known yet
};

// The rate an NF would see if its chain were not throttled: what arrived at it (`measured_pps`), scaled by what the
// chain was offered over what its entry admitted. Backpressure and a full entry ring shed packets before the chain,
// so a downstream NF's arrivals are its upstream's output: weighted by them, an NF gets the share it already had,
// and a chain whose costly NF sits behind a cheap one kept the CFS split it started with (issue 37: 0.40 against
// 1.47 Mpps for equal offers). Scaled, each NF's rate is its chain's offer times the fraction of the chain's traffic
// that reaches it (a filter upstream still lowers it). Nothing admitted yet: the measured rate as it is.
double demand_rate(double measured_pps, double offered_pps, double admitted_pps);

// Shares per NF. On each core the shares sum to about kDefaultShares x (NFs on the core), split in
// proportion to weight x rate x cost, so an overloaded core gives every NF the same fraction of its
// demand (rate-cost proportional fairness). An NF whose cost is not known yet is charged its core's mean
// known cost (1 cycle if none is known), so it is not starved before it has run. A core with no demand
// at all keeps the default shares. Results are clamped to the kernel's [2, 262144].
std::vector<uint64_t> cpu_shares(const std::vector<NfDemand>& nfs);

// Whether `wanted` differs enough from the `written` shares to be written: by more than `tolerance` of them
// (relative). Rewriting every group at every period for the noise in the smoothed rates and costs more than
// doubled the NFs' involuntary context switches (Tables 1-2, heterogeneous case: 578/s at 1 ms against 172/s
// when shares were written only every 100 ms); a real change of demand still lands within one period.
bool shares_worth_writing(uint64_t written, uint64_t wanted, double tolerance);

// cgroup v2's limits on cpu.weight, and its default.
inline constexpr uint64_t kMinWeight = 1;
inline constexpr uint64_t kMaxWeight = 10000;
inline constexpr uint64_t kDefaultWeight = 100;

// The cpu.weight that gives a v2 group the CFS weight `shares` give a v1 group: round(shares x 100 / 1024), in
// [1, 10000] (systemd's conversion too). The kernel gives a v1 group its shares as its CFS weight and a v2 group
// round(weight x 1024 / 100) (sched_weight_from_cgroup), so the ratios NFVnice computes stay the ratios CFS applies,
// to half a weight unit (1024 -> 100, the defaults; 1920:960:192 -> 188:94:19). Not runc's and crun's old
// 1 + ((shares - 2) x 9999) / 262142: it maps the ends of the two ranges onto each other, not equal CFS weights, so
// 1024 shares became 39 and its offset bends ratios (1920:960:192, a 10:5:1 demand, become 74:37:8); runc replaced it
// in 1.3.2 for the first reason (opencontainers/cgroups#20). What v2 cannot express: shares under 16 all become
// weight 1 (v1's floor, 2 shares, is weight 0.2), and shares over 102400 become 10000.
uint64_t cpu_weight_of_shares(uint64_t shares);

}  // namespace tandem::nfvnice
