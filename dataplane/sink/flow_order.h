// The sink's per-flow order check for chains with a scaled NF: a packet whose flow already delivered a later one
// was reordered (flows moving between instances must not be).
#pragma once

#include <cstdint>
#include <unordered_map>

#include <rte_mbuf.h>

namespace tandem {

class FlowOrder {
 public:
  // Notes the packet of sequence number `seq` (the generator's, per chain: increasing in each flow); false when
  // its flow delivered a later packet before it.
  bool in_order(rte_mbuf* m, uint64_t seq);
  uint64_t reordered() const { return reordered_; }

 private:
  struct Key {
    uint64_t addresses;
    uint64_t ports_and_protocol;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const { return key.addresses * 0x9E3779B97F4A7C15ULL ^ key.ports_and_protocol; }
  };
  std::unordered_map<Key, uint64_t, KeyHash> last_seq_;  // per flow: the latest sequence number delivered
  uint64_t reordered_ = 0;
};

}  // namespace tandem
