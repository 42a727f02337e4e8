// Frame construction for the generator: Ethernet, IPv4 and UDP/TCP headers with correct checksums.
#include "frame_builder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_tcp.h>
#include <rte_udp.h>

namespace tandem {

FlowAddress flow_address(uint32_t flow, uint16_t chain) {
  return {.src_ip = (10u << 24) | ((flow + 1) & 0xffffff),
          .dst_ip = (192u << 24) | (168u << 16) | (static_cast<uint32_t>(chain & 0xff) << 8) | 1u,
          .src_port = static_cast<uint16_t>(1024 + flow % 64511),
          .dst_port = 8080};
}

uint16_t FrameShape::header_bytes() const {
  return static_cast<uint16_t>(sizeof(rte_ether_hdr) + (vlan ? sizeof(rte_vlan_hdr) : 0) +
                               (ip_version == 6 ? sizeof(rte_ipv6_hdr) : sizeof(rte_ipv4_hdr)) +
                               (protocol == IPPROTO_TCP ? sizeof(rte_tcp_hdr) : sizeof(rte_udp_hdr)));
}

uint16_t FrameShape::min_frame() const { return std::max<uint16_t>(kMinFrame, header_bytes() + kFcsBytes); }

namespace {

// The L4 header after `ip`, its checksum over the pseudo-header of either IP version.
void build_l4(void* l4, uint16_t l4_length, uint8_t protocol, const FlowAddress& flow, const void* ip,
              uint8_t ip_version) {
  auto checksum = [&](const void* header) {
    return ip_version == 6 ? rte_ipv6_udptcp_cksum(static_cast<const rte_ipv6_hdr*>(ip), header)
                           : rte_ipv4_udptcp_cksum(static_cast<const rte_ipv4_hdr*>(ip), header);
  };
  if (protocol == IPPROTO_TCP) {
    auto* tcp = static_cast<rte_tcp_hdr*>(l4);
    tcp->src_port = rte_cpu_to_be_16(flow.src_port);
    tcp->dst_port = rte_cpu_to_be_16(flow.dst_port);
    tcp->sent_seq = 0;
    tcp->recv_ack = 0;
    tcp->data_off = (sizeof(rte_tcp_hdr) / 4) << 4;
    tcp->tcp_flags = RTE_TCP_ACK_FLAG;
    tcp->rx_win = rte_cpu_to_be_16(65535);
    tcp->tcp_urp = 0;
    tcp->cksum = 0;
    tcp->cksum = checksum(tcp);
  } else {
    auto* udp = static_cast<rte_udp_hdr*>(l4);
    udp->src_port = rte_cpu_to_be_16(flow.src_port);
    udp->dst_port = rte_cpu_to_be_16(flow.dst_port);
    udp->dgram_len = rte_cpu_to_be_16(l4_length);
    udp->dgram_cksum = 0;
    udp->dgram_cksum = checksum(udp);  // maps a computed 0 to 0xffff, as RFC 768 asks
  }
}

void embed_ipv4(uint8_t* address, uint8_t subnet, uint32_t ipv4) {
  const uint8_t prefix[4] = {0x20, 0x01, 0x0d, 0xb8};
  memset(address, 0, 16);
  memcpy(address, prefix, 4);
  address[5] = subnet;
  uint32_t be = rte_cpu_to_be_32(ipv4);
  memcpy(address + 12, &be, 4);
}

}  // namespace

void build_frame(uint8_t* frame, uint16_t frame_size, const FrameShape& shape, const FlowAddress& flow) {
  uint16_t length = frame_size - kFcsBytes;
  auto* eth = reinterpret_cast<rte_ether_hdr*>(frame);
  eth->dst_addr = {{0x02, 0, 0, 0, 0, 0x02}};
  eth->src_addr = {{0x02, 0, 0, 0, 0, 0x01}};
  uint16_t ether_type = shape.ip_version == 6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4;
  uint8_t* l3 = frame + sizeof(rte_ether_hdr);
  if (shape.vlan) {
    eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
    auto* tag = reinterpret_cast<rte_vlan_hdr*>(l3);
    tag->vlan_tci = rte_cpu_to_be_16(shape.vlan & 0x0fff);
    tag->eth_proto = rte_cpu_to_be_16(ether_type);
    l3 += sizeof(rte_vlan_hdr);
  } else {
    eth->ether_type = rte_cpu_to_be_16(ether_type);
  }
  uint16_t ip_length = static_cast<uint16_t>(length - (l3 - frame));

  if (shape.ip_version == 6) {
    auto* ip = reinterpret_cast<rte_ipv6_hdr*>(l3);
    ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
    ip->payload_len = rte_cpu_to_be_16(ip_length - sizeof(rte_ipv6_hdr));
    ip->proto = shape.protocol;
    ip->hop_limits = 64;
    embed_ipv4(ip->src_addr, 0, flow.src_ip);
    embed_ipv4(ip->dst_addr, 1, flow.dst_ip);
    build_l4(ip + 1, ip_length - sizeof(rte_ipv6_hdr), shape.protocol, flow, ip, 6);
    return;
  }
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(l3);
  ip->version_ihl = RTE_IPV4_VHL_DEF;
  ip->type_of_service = 0;
  ip->total_length = rte_cpu_to_be_16(ip_length);
  ip->packet_id = 0;
  ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
  ip->time_to_live = 64;
  ip->next_proto_id = shape.protocol;
  ip->src_addr = rte_cpu_to_be_32(flow.src_ip);
  ip->dst_addr = rte_cpu_to_be_32(flow.dst_ip);
  ip->hdr_checksum = 0;
  ip->hdr_checksum = rte_ipv4_cksum(ip);
  build_l4(ip + 1, ip_length - sizeof(rte_ipv4_hdr), shape.protocol, flow, ip, 4);
}

std::vector<uint16_t> size_schedule(const std::vector<std::pair<uint16_t, double>>& weights, size_t length) {
  double total = 0;
  for (const auto& [size, weight] : weights) total += weight;
  // Largest-remainder apportionment: every size gets its exact share of the cycle, up to rounding.
  std::vector<size_t> counts(weights.size());
  std::vector<std::pair<double, size_t>> remainders;
  size_t assigned = 0;
  for (size_t i = 0; i < weights.size(); i++) {
    double exact = weights[i].second / total * static_cast<double>(length);
    counts[i] = static_cast<size_t>(std::floor(exact));
    assigned += counts[i];
    remainders.emplace_back(exact - std::floor(exact), i);
  }
  std::sort(remainders.begin(), remainders.end(), [](auto a, auto b) { return a.first > b.first; });
  for (size_t k = 0; assigned < length && k < remainders.size(); k++, assigned++) counts[remainders[k].second]++;
  std::vector<uint16_t> schedule;
  for (size_t i = 0; i < weights.size(); i++) schedule.insert(schedule.end(), counts[i], weights[i].first);
  std::shuffle(schedule.begin(), schedule.end(), std::mt19937(12345));
  return schedule;
}

}  // namespace tandem
