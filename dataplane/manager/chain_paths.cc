// The successor sets of a chain's graph (external NFs stepped over) and the check of a hop record against them.
#include "chain_paths.h"

#include "contract/packet_meta.h"

namespace tandem {

void ChainPaths::successors(const Deployment& deployment, int nf, NfSet& next, bool& reaches_sink) const {
  for (int ring : deployment.nfs[nf].out_rings) {
    int to = deployment.rings[ring].to;
    if (to < 0)
      reaches_sink = true;
    else if (deployment.nfs[to].external())
      successors(deployment, to, next, reaches_sink);
    else
      next.set(static_cast<size_t>(to));
  }
}

ChainPaths::ChainPaths(const Deployment& deployment, const ChainConfig& chain) : next_(deployment.nfs.size()) {
  int entry = deployment.rings[chain.entry_ring].to;
  if (deployment.nfs[entry].external())
    successors(deployment, entry, first_, empty_path_);
  else
    first_.set(static_cast<size_t>(entry));
  for (int nf : chain.nfs) {
    if (deployment.nfs[nf].external()) continue;
    bool reaches_sink = false;
    successors(deployment, nf, next_[nf], reaches_sink);
    if (reaches_sink) last_.set(static_cast<size_t>(nf));
  }
}

bool ChainPaths::allows(const uint8_t* hops, int hop_count) const {
  if (hop_count > kMaxHops) return false;  // the record overflowed: a loop, or more stamps than the graph has
  if (hop_count == 0) return empty_path_;
  for (int i = 0; i < hop_count; i++)
    if (hops[i] >= next_.size()) return false;  // not an NF of this deployment
  if (!first_.test(hops[0])) return false;
  for (int i = 1; i < hop_count; i++)
    if (!next_[hops[i - 1]].test(hops[i])) return false;
  return last_.test(hops[hop_count - 1]);
}

}  // namespace tandem
