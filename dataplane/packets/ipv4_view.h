// Access to the IPv4 header of an Ethernet frame in an mbuf, behind up to two VLAN tags, shared by the NFs and
// ports that read IPv4 fields (ip_view.h: IPv4 or IPv6, and the transport header).
#pragma once

#include <cstdint>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

namespace tandem {

// Two tags cover 802.1Q and QinQ (an 802.1ad or older 0x9100 outer tag), as switches and hypervisors hand them over.
inline constexpr int kMaxVlanTags = 2;

inline bool is_vlan_tag(uint16_t ether_type_be) {
  return ether_type_be == rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN) ||
         ether_type_be == rte_cpu_to_be_16(RTE_ETHER_TYPE_QINQ) ||
         ether_type_be == rte_cpu_to_be_16(RTE_ETHER_TYPE_QINQ1);
}

// The EtherType after the frame's VLAN tags (network byte order) and the offset of what follows it; 0 and the
// offset reached for a frame with more tags than kMaxVlanTags or too short for them.
struct L3OfFrame {
  uint16_t ether_type_be = 0;
  uint32_t offset = 0;
};

inline L3OfFrame l3_of_frame(rte_mbuf* m) {
  uint32_t length = rte_pktmbuf_data_len(m);
  if (length < sizeof(rte_ether_hdr)) return {};
  auto* data = rte_pktmbuf_mtod(m, uint8_t*);
  uint32_t offset = sizeof(rte_ether_hdr);
  uint16_t type = reinterpret_cast<const rte_ether_hdr*>(data)->ether_type;
  for (int tags = 0; is_vlan_tag(type); tags++) {
    if (tags == kMaxVlanTags || length < offset + sizeof(rte_vlan_hdr)) return {0, offset};
    type = reinterpret_cast<const rte_vlan_hdr*>(data + offset)->eth_proto;
    offset += sizeof(rte_vlan_hdr);
  }
  return {type, offset};
}

struct Ipv4InFrame {
  rte_ipv4_hdr* header = nullptr;  // nullptr: not IPv4, more tags than kMaxVlanTags, or too short for the header
  uint32_t offset = 0;             // of the header from the frame's first byte
};

// The IPv4 header and where it starts. Its own length fields are not checked: each reader bounds what it reads by
// the header's offset and the frame's length.
inline Ipv4InFrame ipv4_in_frame(rte_mbuf* m) {
  auto [type, offset] = l3_of_frame(m);
  if (type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) || rte_pktmbuf_data_len(m) < offset + sizeof(rte_ipv4_hdr))
    return {};
  return {rte_pktmbuf_mtod_offset(m, rte_ipv4_hdr*, offset), offset};
}

// The IPv4 header, or nullptr when the frame is too short or not IPv4.
inline rte_ipv4_hdr* ipv4_header(rte_mbuf* m) { return ipv4_in_frame(m).header; }

}  // namespace tandem
