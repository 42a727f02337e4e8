// The paths through a chain's graph a packet may take, against which the sink checks each packet's hop record.
#pragma once

#include <bitset>
#include <cstdint>
#include <vector>

#include "contract/deployment.h"
#include "contract/shm_layout.h"

namespace tandem {

class ChainPaths {
 public:
  // Over the NFs that stamp hops: an external NF is an unmodified application, so a path steps over it.
  ChainPaths(const Deployment& deployment, const ChainConfig& chain);

  // True when the record lists NFs that follow edges of the graph from its entry to one of its exits, each once.
  bool allows(const uint8_t* hops, int hop_count) const;

 private:
  using NfSet = std::bitset<kMaxNfs>;
  // Adds the stamping NFs a packet meets next after leaving `nf` to `next`, and sets `reaches_sink` when it may
  // reach the sink without meeting one.
  void successors(const Deployment& deployment, int nf, NfSet& next, bool& reaches_sink) const;

  NfSet first_;               // where a path may start
  std::vector<NfSet> next_;   // per NF: which may follow it
  NfSet last_;                // where a path may end
  bool empty_path_ = false;   // a packet may pass without a stamp (every NF on some path is external)
};

}  // namespace tandem
