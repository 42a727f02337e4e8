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

}  // namespace tandem::nfvnice
