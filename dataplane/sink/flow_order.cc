// The per-flow order check: the latest sequence number each flow delivered.
#include "flow_order.h"

#include "dataplane/packets/five_tuple.h"

namespace tandem {

bool FlowOrder::in_order(rte_mbuf* m, uint64_t seq) {
  std::optional<FiveTuple> tuple = five_tuple_of(m);
  if (!tuple) return true;  // not a flow
  Key key{uint64_t{tuple->src_ip} << 32 | tuple->dst_ip,
          uint64_t{tuple->src_port} << 24 | uint64_t{tuple->dst_port} << 8 | tuple->proto};
  auto [last, first] = last_seq_.try_emplace(key, seq);
  if (first) return true;
  if (seq < last->second) {
    reordered_++;
    return false;
  }
  last->second = seq;
  return true;
}

}  // namespace tandem
