// The successor sets of a chain's graph (external NFs and parallel branches stepped over), each fork's branch
// NFs, and the check of a packet's hop records against them.
#include "chain_paths.h"

#include <algorithm>

#include "contract/packet_meta.h"

namespace tandem {

void ChainPaths::successors_along(const Deployment& deployment, int ring, NfSet& next, bool& reaches_sink) const {
  int to = deployment.rings[ring].to;
  if (to < 0)
    reaches_sink = true;
  else if (deployment.nfs[to].external() || deployment.nfs[to].in_branch)
    successors(deployment, to, next, reaches_sink);
  else
    next.set(static_cast<size_t>(to));
}

void ChainPaths::successors(const Deployment& deployment, int nf, NfSet& next, bool& reaches_sink) const {
  for (int ring : deployment.nfs[nf].out_rings) successors_along(deployment, ring, next, reaches_sink);
}

static_assert(kMaxNfs <= 128, "PacketMeta::branch_hops holds 128 NFs");

ChainPaths::ChainPaths(const Deployment& deployment, const ChainConfig& chain, const GatesOfNf& gates_of)
    : next_(deployment.nfs.size()),
      next_by_gate_(deployment.nfs.size()),
      last_by_gate_(deployment.nfs.size()),
      group_(deployment.nfs.size()) {
  int entry = deployment.rings[chain.entry_ring].to;
  if (deployment.nfs[entry].external())
    successors(deployment, entry, first_, empty_path_);
  else
    first_.set(static_cast<size_t>(entry));
  for (int fork : chain.nfs)
    for (const std::vector<int>& branch : deployment.nfs[fork].branches)
      for (int nf : branch) group_[fork][nf / 64] |= uint64_t{1} << (nf % 64);
  for (int nf : chain.nfs) {
    if (deployment.nfs[nf].external() || deployment.nfs[nf].in_branch) continue;
    bool reaches_sink = false;
    successors(deployment, nf, next_[nf], reaches_sink);
    if (reaches_sink) last_.set(static_cast<size_t>(nf));
    // A labelled fan-out: each gate's edge on its own (the control plane checked every label is a gate).
    const std::vector<int>& out = deployment.nfs[nf].out_rings;
    if (std::none_of(out.begin(), out.end(), [&](int ring) { return !deployment.rings[ring].label.empty(); })) continue;
    const std::vector<std::string> gates = gates_of(deployment.nfs[nf]);
    next_by_gate_[nf].assign(gates.size(), NfSet{});
    last_by_gate_[nf].assign(gates.size(), false);
    for (int ring : out) {
      auto gate =
          static_cast<size_t>(std::find(gates.begin(), gates.end(), deployment.rings[ring].label) - gates.begin());
      if (gate == gates.size()) continue;  // not a gate: no packet can take this edge
      bool ends = false;
      successors_along(deployment, ring, next_by_gate_[nf][gate], ends);
      last_by_gate_[nf][gate] = ends;
    }
  }
}

bool ChainPaths::may_follow(int nf, uint8_t gate, int next) const {
  if (next_by_gate_[nf].empty()) return next_[nf].test(static_cast<size_t>(next));
  return gate < next_by_gate_[nf].size() && next_by_gate_[nf][gate].test(static_cast<size_t>(next));
}

bool ChainPaths::may_end(int nf, uint8_t gate) const {
  if (last_by_gate_[nf].empty()) return last_.test(static_cast<size_t>(nf));
  return gate < last_by_gate_[nf].size() && last_by_gate_[nf][gate];
}

bool ChainPaths::allows(const uint8_t* hops, int hop_count, const uint64_t (&branch_hops)[2],
                        const uint8_t* hop_gates) const {
  if (!branches_match(hops, hop_count, branch_hops)) return false;
  if (hop_count > kMaxHops) return false;  // the record overflowed: a loop, or more stamps than the graph has
  if (hop_count == 0) return empty_path_;
  for (int i = 0; i < hop_count; i++)
    if (hops[i] >= next_.size()) return false;  // not an NF of this deployment
  if (!first_.test(hops[0])) return false;
  for (int i = 1; i < hop_count; i++)
    if (!may_follow(hops[i - 1], hop_gates[i - 1], hops[i])) return false;
  return may_end(hops[hop_count - 1], hop_gates[hop_count - 1]);
}

bool ChainPaths::branches_match(const uint8_t* hops, int hop_count, const uint64_t (&branch_hops)[2]) const {
  uint64_t expected[2] = {0, 0};
  for (int i = 0; i < std::min(hop_count, kMaxHops); i++)
    if (hops[i] < group_.size()) {
      expected[0] |= group_[hops[i]][0];
      expected[1] |= group_[hops[i]][1];
    }
  return expected[0] == branch_hops[0] && expected[1] == branch_hops[1];
}

}  // namespace tandem
