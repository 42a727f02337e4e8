// Test support for code that needs DPDK: an EAL without hugepages (packet_test_main.cc) and mbufs holding frames.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <netinet/in.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "contract/packet_meta.h"
#include "frame_builder.h"

namespace tandem::testing {

// The pool created by packet_test_main.cc after EAL init.
rte_mempool* test_pool();

// An mbuf holding a valid frame of flow `flow` (see flow_address) with the given size and protocol.
inline rte_mbuf* make_frame(uint32_t flow = 0, uint16_t size = 64, uint8_t protocol = IPPROTO_UDP) {
  rte_mbuf* m = rte_pktmbuf_alloc(test_pool());
  uint16_t length = size - kFcsBytes;
  m->data_len = m->pkt_len = length;
  memset(rte_pktmbuf_mtod(m, void*), 0, length);
  build_frame(rte_pktmbuf_mtod(m, uint8_t*), size, protocol, flow_address(flow, 0));
  clear_hops(meta_of(m));
  return m;
}

// A TCP frame of flow `flow` whose segment carries `payload` (e.g. an HTTP request), with valid checksums.
inline rte_mbuf* make_tcp_frame_with(const std::string& payload, uint32_t flow = 0) {
  constexpr size_t kHeaders = sizeof(rte_ether_hdr) + sizeof(rte_ipv4_hdr) + 20;
  auto size = static_cast<uint16_t>(std::max<size_t>(kMinFrame, kHeaders + payload.size() + kFcsBytes));
  rte_mbuf* m = rte_pktmbuf_alloc(test_pool());
  uint16_t length = size - kFcsBytes;
  m->data_len = m->pkt_len = length;
  uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
  memset(data, 0, length);
  memcpy(data + kHeaders, payload.data(), payload.size());
  build_frame(data, size, IPPROTO_TCP, flow_address(flow, 0));
  clear_hops(meta_of(m));
  return m;
}

// Inserts a VLAN tag (TPID `tpid`, VLAN id `id`) in front of the frame's EtherType; called twice, it makes QinQ
// (the later call's tag outermost).
inline rte_mbuf* with_vlan_tag(rte_mbuf* m, uint16_t id, uint16_t tpid = RTE_ETHER_TYPE_VLAN) {
  auto* moved = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, sizeof(rte_vlan_hdr)));
  memmove(moved, moved + sizeof(rte_vlan_hdr), 2 * RTE_ETHER_ADDR_LEN);  // the MAC addresses move to the front
  auto* tag = reinterpret_cast<uint16_t*>(moved + 2 * RTE_ETHER_ADDR_LEN);
  tag[0] = rte_cpu_to_be_16(tpid);
  tag[1] = rte_cpu_to_be_16(id);  // priority 0, DEI 0
  return m;
}

// Inserts IPv4 options after the 20-byte header of an untagged frame (a multiple of 4 bytes; a Router Alert by
// default, as IGMP and RSVP send), with the header's length, total length and checksum made right again.
inline rte_mbuf* with_ipv4_options(rte_mbuf* m, const std::vector<uint8_t>& options = {0x94, 0x04, 0x00, 0x00}) {
  constexpr size_t kHeaders = sizeof(rte_ether_hdr) + sizeof(rte_ipv4_hdr);
  auto* moved = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, static_cast<uint16_t>(options.size())));
  memmove(moved, moved + options.size(), kHeaders);
  memcpy(moved + kHeaders, options.data(), options.size());
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(moved + sizeof(rte_ether_hdr));
  ip->ihl = static_cast<uint8_t>((sizeof(rte_ipv4_hdr) + options.size()) / 4);
  ip->total_length = rte_cpu_to_be_16(static_cast<uint16_t>(rte_be_to_cpu_16(ip->total_length) + options.size()));
  ip->hdr_checksum = 0;
  ip->hdr_checksum = rte_ipv4_cksum(ip);
  return m;
}

// An IPv6 extension header: its type (the next-header value that announces it) and its bytes, a multiple of 8
// (the first, its own next header, is filled in when the frame is made).
struct Ipv6Extension {
  uint8_t type;
  std::vector<uint8_t> bytes;
};

// A hop-by-hop options header of 8 bytes (a Router Alert, as MLD sends) and a fragment header at `offset` (in 8-byte
// units; more fragments follow).
inline Ipv6Extension hop_by_hop() { return {IPPROTO_HOPOPTS, {0, 0, 5, 2, 0, 0, 1, 0}}; }
inline Ipv6Extension fragment_at(uint16_t offset) {
  return {IPPROTO_FRAGMENT,
          {0, 0, static_cast<uint8_t>(offset >> 5), static_cast<uint8_t>((offset << 3 & 0xf8) | 1), 0, 0, 0, 42}};
}

// An IPv6 frame from 2001:db8::1 port 40000 to 2001:db8::2 port 80: behind `extensions`, a TCP header (20 bytes) or
// a UDP header, then `payload`. Transport checksums are left 0: no NF here reads them.
inline rte_mbuf* make_ipv6_frame(uint8_t protocol, const std::string& payload = "",
                                 const std::vector<Ipv6Extension>& extensions = {}, uint8_t hop_limit = 64) {
  std::vector<uint8_t> frame = {2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x86, 0xdd};  // destination, source, IPv6
  std::vector<uint8_t> after;  // the extension headers, the transport header and the payload
  for (size_t i = 0; i < extensions.size(); i++) {
    std::vector<uint8_t> bytes = extensions[i].bytes;
    bytes[0] = i + 1 < extensions.size() ? extensions[i + 1].type : protocol;
    after.insert(after.end(), bytes.begin(), bytes.end());
  }
  if (protocol == IPPROTO_TCP)
    after.insert(after.end(), {0x9c, 0x40, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 5 << 4, 0x18, 0xff, 0xff, 0, 0, 0, 0});
  else
    after.insert(after.end(), {0x9c, 0x40, 0, 80, 0, static_cast<uint8_t>(8 + payload.size()), 0, 0});
  after.insert(after.end(), payload.begin(), payload.end());
  uint8_t first = extensions.empty() ? protocol : extensions[0].type;
  auto length = static_cast<uint16_t>(after.size());
  frame.insert(frame.end(),
               {6 << 4, 0, 0, 0, static_cast<uint8_t>(length >> 8), static_cast<uint8_t>(length), first, hop_limit});
  for (uint8_t host : {1, 2})
    frame.insert(frame.end(), {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, host});
  frame.insert(frame.end(), after.begin(), after.end());
  frame.resize(std::max<size_t>(frame.size(), kMinFrame - kFcsBytes));
  rte_mbuf* m = rte_pktmbuf_alloc(test_pool());
  m->data_len = m->pkt_len = static_cast<uint16_t>(frame.size());
  memcpy(rte_pktmbuf_mtod(m, uint8_t*), frame.data(), frame.size());
  clear_hops(meta_of(m));
  return m;
}

inline void free_all(const std::vector<rte_mbuf*>& pkts) {
  for (rte_mbuf* m : pkts) rte_pktmbuf_free(m);
}

}  // namespace tandem::testing
