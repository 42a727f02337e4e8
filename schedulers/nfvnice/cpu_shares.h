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

}  // namespace tandem::nfvnice
