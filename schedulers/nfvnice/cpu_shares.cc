// Normalising rate x cost x weight into cpu.shares per core, and shares into cgroup v2's cpu.weight.
#include "cpu_shares.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace tandem::nfvnice {

std::vector<uint64_t> cpu_shares(const std::vector<NfDemand>& nfs) {
  struct CoreTotals {
    double known_cost = 0;
    int known = 0;
    int count = 0;
    double load = 0;
  };
  std::map<int, CoreTotals> cores;
  for (const NfDemand& nf : nfs) {
    CoreTotals& core = cores[nf.core];
    core.count++;
    if (nf.cost_cycles > 0) {
      core.known_cost += nf.cost_cycles;
      core.known++;
    }
  }
  std::vector<double> load(nfs.size());
  for (size_t i = 0; i < nfs.size(); i++) {
    const CoreTotals& core = cores[nfs[i].core];
    double cost = nfs[i].cost_cycles > 0 ? nfs[i].cost_cycles : core.known ? core.known_cost / core.known : 1.0;
    load[i] = std::max(nfs[i].weight, 0.0) * std::max(nfs[i].rate_pps, 0.0) * cost;
    cores[nfs[i].core].load += load[i];
  }
  std::vector<uint64_t> shares(nfs.size(), kDefaultShares);
  for (size_t i = 0; i < nfs.size(); i++) {
    const CoreTotals& core = cores[nfs[i].core];
    if (!(core.load > 0)) continue;
    double share = static_cast<double>(kDefaultShares) * core.count * load[i] / core.load;
    shares[i] = std::clamp<uint64_t>(static_cast<uint64_t>(std::llround(share)), kMinShares, kMaxShares);
  }
  return shares;
}

double demand_rate(double measured_pps, double offered_pps, double admitted_pps) {
  if (!(admitted_pps > 0) || !(offered_pps > admitted_pps)) return measured_pps;
  return measured_pps * offered_pps / admitted_pps;
}

bool shares_worth_writing(uint64_t written, uint64_t wanted, double tolerance) {
  double difference = std::fabs(static_cast<double>(wanted) - static_cast<double>(written));
  return wanted != written && difference > tolerance * static_cast<double>(written);
}

uint64_t cpu_weight_of_shares(uint64_t shares) {
  return std::clamp<uint64_t>((shares * kDefaultWeight + kDefaultShares / 2) / kDefaultShares, kMinWeight, kMaxWeight);
}

}  // namespace tandem::nfvnice
