// Writing and reading the packet record's trailer, field by field, in the host's byte order (both ends run on
// the same machine).
#include "wire_meta.h"

#include <cstring>

namespace tandem {

namespace {

template <typename T>
uint8_t* put(uint8_t* at, T value) {
  memcpy(at, &value, sizeof(T));
  return at + sizeof(T);
}

template <typename T>
const uint8_t* get(const uint8_t* at, T& value) {
  memcpy(&value, at, sizeof(T));
  return at + sizeof(T);
}

}  // namespace

bool append_wire_meta(rte_mbuf* m) {
  const PacketMeta* meta = meta_of(m);
  uint8_t hops = meta->hop_count < kMaxHops ? meta->hop_count : kMaxHops;
  auto* at = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, wire_meta_bytes(hops)));
  if (at == nullptr) return false;
  at = put(at, meta->seq);
  at = put(at, meta->tx_tsc);
  at = put(at, meta->trace_slot);
  at = put(at, meta->chain);
  at = put(at, meta->hop_count);
  memcpy(at, meta->hops, hops);
  at += hops;
  at = put(at, hops);
  put(at, kWireMetaMagic);
  return true;
}

bool take_wire_meta(rte_mbuf* m) {
  uint16_t length = rte_pktmbuf_data_len(m);
  if (length < kWireMetaFixedBytes) return false;
  const uint8_t* end = rte_pktmbuf_mtod(m, const uint8_t*) + length;
  uint16_t magic = 0;
  uint8_t hops = 0;
  get(end - 2, magic);
  get(end - 3, hops);
  if (magic != kWireMetaMagic || hops > kMaxHops || length < wire_meta_bytes(hops)) return false;
  const uint8_t* at = end - wire_meta_bytes(hops);
  PacketMeta* meta = meta_of(m);
  at = get(at, meta->seq);
  at = get(at, meta->tx_tsc);
  at = get(at, meta->trace_slot);
  at = get(at, meta->chain);
  at = get(at, meta->hop_count);
  memcpy(meta->hops, at, hops);
  meta->branch_hops[0] = meta->branch_hops[1] = 0;
  meta->parallel_width = 0;
  rte_pktmbuf_trim(m, wire_meta_bytes(hops));
  return true;
}

}  // namespace tandem
