// The paths through a chain's graph a packet may take, against which the sink checks each packet's hop record.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "contract/deployment.h"
#include "contract/shm_layout.h"

namespace tandem {

// An NF type's gates, in the order its descriptor names them (a gate's number is its place there).
using GatesOfNf = std::function<std::vector<std::string>(const NfConfig& nf)>;

class ChainPaths {
 public:
  // Over the NFs that stamp the ordered record: an external NF is an unmodified application and a parallel
  // branch's NFs stamp the branch hop set, so a path steps over both.
  ChainPaths(const Deployment& deployment, const ChainConfig& chain, const GatesOfNf& gates_of);

  // True when the ordered record lists NFs that follow edges of the graph from its entry to one of its exits, each
  // once; at a labelled fan-out, the edge labelled with the gate its NF chose (hop_gates, beside its hop); a
  // parallel group passed as one step from its fork to its join, and the branch hop set holding exactly the
  // branches' NFs of the groups the packet passed (every branch processed it, nothing else stamped there).
  bool allows(const uint8_t* hops, int hop_count, const uint64_t (&branch_hops)[2], const uint8_t* hop_gates) const;

 private:
  using NfSet = std::bitset<kMaxNfs>;
  // Adds the stamping NFs a packet meets next after leaving along `ring` (after `nf`, along all its out-edges)
  // to `next`, and sets `reaches_sink` when it may reach the sink without meeting one.
  void successors_along(const Deployment& deployment, int ring, NfSet& next, bool& reaches_sink) const;
  void successors(const Deployment& deployment, int nf, NfSet& next, bool& reaches_sink) const;
  bool branches_match(const uint8_t* hops, int hop_count, const uint64_t (&branch_hops)[2]) const;
  bool may_follow(int hop, uint8_t gate, int next_hop) const;
  bool may_end(int hop, uint8_t gate) const;

  // Sets and vectors by stamp (NfConfig::hop), not by index.
  NfSet first_;              // where a path may start
  std::vector<NfSet> next_;  // per NF: which may follow it
  NfSet last_;               // where a path may end
  // Per labelled fan-out NF, per gate: which may follow it, and whether it may end there (empty elsewhere).
  std::vector<std::vector<NfSet>> next_by_gate_;
  std::vector<std::vector<bool>> last_by_gate_;
  std::vector<std::array<uint64_t, 2>> group_;  // per fork: the NFs of its branches, as PacketMeta::branch_hops
  bool empty_path_ = false;                     // a packet may pass without a stamp (every NF on some path is external)
};

}  // namespace tandem
