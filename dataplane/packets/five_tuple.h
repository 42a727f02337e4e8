// Extraction of the IPv4 5-tuple (addresses, ports, protocol) used by flow-aware NFs, the scaled egress and the sink.
#pragma once

#include <cstdint>
#include <optional>

#include <rte_hash_crc.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "ipv4_view.h"

namespace tandem {

struct __attribute__((packed)) FiveTuple {
  uint32_t src_ip;  // host byte order
  uint32_t dst_ip;
  uint16_t src_port;
  uint16_t dst_port;
  uint8_t proto;
};

// Ports are 0 for protocols other than UDP and TCP, and for frames too short to hold them.
inline std::optional<FiveTuple> five_tuple_of(rte_mbuf* m) {
  auto [ip, l3] = ipv4_in_frame(m);
  if (ip == nullptr) return std::nullopt;
  FiveTuple t{rte_be_to_cpu_32(ip->src_addr), rte_be_to_cpu_32(ip->dst_addr), 0, 0, ip->next_proto_id};
  uint32_t l4_offset = l3 + rte_ipv4_hdr_len(ip);
  bool has_ports = (t.proto == IPPROTO_UDP || t.proto == IPPROTO_TCP) && rte_pktmbuf_data_len(m) >= l4_offset + 4;
  if (has_ports) {
    auto* ports = rte_pktmbuf_mtod_offset(m, const uint16_t*, l4_offset);
    t.src_port = rte_be_to_cpu_16(ports[0]);
    t.dst_port = rte_be_to_cpu_16(ports[1]);
  }
  return t;
}

// The flow a frame belongs to, as a hash of its 5-tuple (0 for a frame that is not IPv4): egress ports that
// spread flows over instances keep each flow on one of them.
inline uint32_t flow_hash(rte_mbuf* m) {
  std::optional<FiveTuple> tuple = five_tuple_of(m);
  return tuple ? rte_hash_crc(&*tuple, sizeof(FiveTuple), 0) : 0;
}

}  // namespace tandem
