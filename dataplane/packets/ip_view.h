// Where a frame's IP packet and its transport header are, for IPv4 (with options) and IPv6 (with extension
// headers), behind up to two VLAN tags: the one parser the NFs that read L3/L4 fields share.
#pragma once

#include <algorithm>
#include <cstdint>

#include <rte_ip.h>
#include <rte_mbuf.h>

#include "ipv4_view.h"

namespace tandem {

// IPv6 extension headers walked before giving up on finding the transport header: real stacks send one or two
// (hop-by-hop options for MLD, a fragment header); a chain of many is an evasion attempt, and unreadable here.
inline constexpr int kMaxIpv6ExtensionHeaders = 8;

struct IpInFrame {
  uint8_t version = 0;      // 4 or 6; 0: neither, more tags than kMaxVlanTags, or too short for the IP header
  uint32_t l3_offset = 0;   // of the IP header from the frame's first byte
  uint32_t l3_end = 0;      // where the IP packet ends by its own length field (never past the frame)
  uint8_t l4_protocol = 0;  // IPv4's protocol, or the next header after IPv6's extension headers
  uint32_t l4_offset = 0;   // of the transport header; 0 where there is none to read (see `fragment`)
  bool fragment = false;    // part of a fragmented packet: only the first fragment (offset 0) has a transport header
  bool truncated = false;   // its length field claims more than the frame holds
  rte_ipv4_hdr* ipv4 = nullptr;
  rte_ipv6_hdr* ipv6 = nullptr;
};

namespace ip_view_detail {

inline bool is_ipv6_extension(uint8_t next_header) {
  switch (next_header) {
    case IPPROTO_HOPOPTS:
    case IPPROTO_ROUTING:
    case IPPROTO_FRAGMENT:
    case IPPROTO_DSTOPTS:
      return true;
    default:
      return false;
  }
}

// Walks IPv6's extension headers from `offset` (the first after the fixed header) to the transport header.
inline void walk_ipv6_extensions(const uint8_t* data, uint32_t offset, IpInFrame& ip) {
  uint8_t next = ip.ipv6->proto;
  for (int seen = 0; is_ipv6_extension(next); seen++) {
    if (seen == kMaxIpv6ExtensionHeaders || offset + 8 > ip.l3_end) return;  // no transport header to read
    const uint8_t* extension = data + offset;
    if (next == IPPROTO_FRAGMENT) {  // 8 bytes: next header, reserved, offset (13 bits) and flags, identification
      ip.fragment = true;
      uint16_t offset_and_flags = static_cast<uint16_t>(extension[2] << 8 | extension[3]);
      if ((offset_and_flags & 0xfff8) != 0) return;  // a later fragment: its bytes continue another's transport data
      next = extension[0];
      offset += 8;
    } else {  // hop-by-hop, routing, destination options: a length in 8-byte units, not counting the first 8
      next = extension[0];
      offset += 8u * (extension[1] + 1u);
    }
  }
  if (offset > ip.l3_end) return;
  ip.l4_protocol = next;
  ip.l4_offset = offset;
}

}  // namespace ip_view_detail

// The frame's IP packet. Lengths are bounded by the frame: a header that claims more than the frame holds is cut to
// it (l3_end), and readers bound what they read by l3_end and l4_offset. A transport header may still be shorter
// than its protocol's: each reader checks the bytes it needs.
inline IpInFrame ip_in_frame(rte_mbuf* m) {
  auto [ether_type, offset] = l3_of_frame(m);
  uint32_t length = rte_pktmbuf_data_len(m);
  auto* data = rte_pktmbuf_mtod(m, uint8_t*);
  IpInFrame ip;
  ip.l3_offset = offset;
  if (ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) && length >= offset + sizeof(rte_ipv4_hdr)) {
    ip.version = 4;
    ip.ipv4 = reinterpret_cast<rte_ipv4_hdr*>(data + offset);
    uint32_t claimed_end = offset + rte_be_to_cpu_16(ip.ipv4->total_length);
    ip.truncated = claimed_end > length;
    ip.l3_end = std::min(length, claimed_end);
    ip.l4_protocol = ip.ipv4->next_proto_id;
    uint16_t fragment = rte_be_to_cpu_16(ip.ipv4->fragment_offset);
    ip.fragment = (fragment & (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) != 0;
    uint32_t l4 = offset + rte_ipv4_hdr_len(ip.ipv4);
    if ((fragment & RTE_IPV4_HDR_OFFSET_MASK) == 0 && rte_ipv4_hdr_len(ip.ipv4) >= sizeof(rte_ipv4_hdr) &&
        l4 <= ip.l3_end)
      ip.l4_offset = l4;
  } else if (ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6) && length >= offset + sizeof(rte_ipv6_hdr)) {
    ip.version = 6;
    ip.ipv6 = reinterpret_cast<rte_ipv6_hdr*>(data + offset);
    uint32_t claimed_end =
        offset + static_cast<uint32_t>(sizeof(rte_ipv6_hdr)) + rte_be_to_cpu_16(ip.ipv6->payload_len);
    ip.truncated = claimed_end > length;
    ip.l3_end = std::min(length, claimed_end);
    ip_view_detail::walk_ipv6_extensions(data, offset + sizeof(rte_ipv6_hdr), ip);
  }
  return ip;
}

}  // namespace tandem
