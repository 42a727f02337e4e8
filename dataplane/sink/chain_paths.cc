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
    next.set(deployment.nfs[to].hop);
}

void ChainPaths::successors(const Deployment& deployment, int nf, NfSet& next, bool& reaches_sink) const {
  for (int ring : deployment.nfs[nf].out_rings) successors_along(deployment, ring, next, reaches_sink);
}

static_assert(kMaxNfs <= 128, "PacketMeta::branch_hops holds 128 NFs");

// In the stamps' terms (NfConfig::hop): those of the chain's NFs are its own while it runs, whatever chains a service
// removed before it, whose stamps it may have been given.
ChainPaths::ChainPaths(const Deployment& deployment, const ChainConfig& chain, const GatesOfNf& gates_of)
    : next_(kMaxNfs), next_by_gate_(kMaxNfs), last_by_gate_(kMaxNfs), group_(kMaxNfs) {
  int entry = deployment.rings[chain.entry_ring].to;
  if (deployment.nfs[entry].external())
    successors(deployment, entry, first_, empty_path_);
  else
    first_.set(deployment.nfs[entry].hop);
  for (int fork : chain.nfs)
    for (const std::vector<int>& branch : deployment.nfs[fork].branches)
      for (int nf : branch) {
        uint8_t hop = deployment.nfs[nf].hop;
        group_[deployment.nfs[fork].hop][hop / 64] |= uint64_t{1} << (hop % 64);
      }
  for (int index : chain.nfs) {
    const NfConfig& nf = deployment.nfs[index];
    if (nf.external() || nf.in_branch) continue;
    bool reaches_sink = false;
    successors(deployment, index, next_[nf.hop], reaches_sink);
    if (reaches_sink) last_.set(nf.hop);
    // A labelled fan-out: each gate's edge on its own (the control plane checked every label is a gate).
    const std::vector<int>& out = nf.out_rings;
    if (std::none_of(out.begin(), out.end(), [&](int ring) { return !deployment.rings[ring].label.empty(); })) continue;
    const std::vector<std::string> gates = gates_of(nf);
    next_by_gate_[nf.hop].assign(gates.size(), NfSet{});
    last_by_gate_[nf.hop].assign(gates.size(), false);
    for (int ring : out) {
      auto gate =
          static_cast<size_t>(std::find(gates.begin(), gates.end(), deployment.rings[ring].label) - gates.begin());
      if (gate == gates.size()) continue;  // not a gate: no packet can take this edge
      bool ends = false;
      successors_along(deployment, ring, next_by_gate_[nf.hop][gate], ends);
      last_by_gate_[nf.hop][gate] = ends;
    }
  }
}

bool ChainPaths::may_follow(int hop, uint8_t gate, int next_hop) const {
  if (next_by_gate_[hop].empty()) return next_[hop].test(static_cast<size_t>(next_hop));
  return gate < next_by_gate_[hop].size() && next_by_gate_[hop][gate].test(static_cast<size_t>(next_hop));
}

bool ChainPaths::may_end(int hop, uint8_t gate) const {
  if (last_by_gate_[hop].empty()) return last_.test(static_cast<size_t>(hop));
  return gate < last_by_gate_[hop].size() && last_by_gate_[hop][gate];
}

bool ChainPaths::allows(const uint8_t* hops, int hop_count, const uint64_t (&branch_hops)[2],
                        const uint8_t* hop_gates) const {
  if (!branches_match(hops, hop_count, branch_hops)) return false;
  if (hop_count > kMaxHops) return false;  // the record overflowed: a loop, or more stamps than the graph has
  if (hop_count == 0) return empty_path_;
  for (int i = 0; i < hop_count; i++)
    if (hops[i] >= next_.size()) return false;  // no NF's stamp
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
