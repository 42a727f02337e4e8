// Tests of generated frames: header fields, IPv4, IPv6 and UDP/TCP checksums, tags, flows, and the size schedule.
#include "frame_builder.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_tcp.h>
#include <rte_udp.h>

namespace tandem {
namespace {

// Independent one's complement checksum, written from RFC 1071, to check DPDK-computed ones against.
uint16_t reference_checksum(const std::vector<uint8_t>& bytes) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < bytes.size(); i += 2) sum += (bytes[i] << 8) | bytes[i + 1];
  if (bytes.size() % 2) sum += bytes.back() << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

std::vector<uint8_t> frame_of(uint16_t size, uint8_t protocol, uint32_t flow) {
  std::vector<uint8_t> frame(size - kFcsBytes, 0);
  for (size_t i = 54; i < frame.size(); i++) frame[i] = static_cast<uint8_t>(i * 7);  // a non-zero payload
  build_frame(frame.data(), size, protocol, flow_address(flow, 0));
  return frame;
}

// Verifies the L4 checksum over the pseudo header, L4 header and payload.
bool l4_checksum_valid(const std::vector<uint8_t>& frame) {
  std::vector<uint8_t> pseudo(frame.begin() + 26, frame.begin() + 34);  // source and destination address
  uint16_t l4_length = static_cast<uint16_t>(frame.size() - 34);
  pseudo.insert(pseudo.end(), {0, frame[23], static_cast<uint8_t>(l4_length >> 8), static_cast<uint8_t>(l4_length)});
  pseudo.insert(pseudo.end(), frame.begin() + 34, frame.end());
  return reference_checksum(pseudo) == 0;
}

TEST(FrameBuilder, UdpFramesHaveValidHeadersAndChecksums) {
  for (uint16_t size : {64, 65, 200, 1400, 1518}) {
    std::vector<uint8_t> frame = frame_of(size, IPPROTO_UDP, 5);
    auto* ip = reinterpret_cast<rte_ipv4_hdr*>(frame.data() + 14);
    EXPECT_EQ(rte_be_to_cpu_16(reinterpret_cast<rte_ether_hdr*>(frame.data())->ether_type), RTE_ETHER_TYPE_IPV4);
    EXPECT_EQ(ip->version_ihl, 0x45);
    EXPECT_EQ(rte_be_to_cpu_16(ip->total_length), size - 4 - 14);
    EXPECT_EQ(reference_checksum({frame.begin() + 14, frame.begin() + 34}), 0) << "IPv4 checksum, size " << size;
    EXPECT_EQ(rte_be_to_cpu_16(reinterpret_cast<rte_udp_hdr*>(ip + 1)->dgram_len), size - 4 - 34);
    EXPECT_TRUE(l4_checksum_valid(frame)) << "UDP checksum, size " << size;
  }
}

TEST(FrameBuilder, TcpFramesHaveValidChecksums) {
  for (uint16_t size : {64, 1518}) {
    std::vector<uint8_t> frame = frame_of(size, IPPROTO_TCP, 9);
    EXPECT_EQ(frame[23], IPPROTO_TCP);
    EXPECT_TRUE(l4_checksum_valid(frame)) << "TCP checksum, size " << size;
  }
}

// IPv6 and 802.1Q frames, checked byte by byte from the RFCs' layouts (RFC 8200's pseudo-header for the L4 checksum).
TEST(FrameBuilder, Ipv6AndTaggedFramesHaveValidHeadersAndChecksums) {
  for (FrameShape shape : {FrameShape{.protocol = IPPROTO_UDP, .ip_version = 6},
                           FrameShape{.protocol = IPPROTO_TCP, .ip_version = 6, .vlan = 100},
                           FrameShape{.protocol = IPPROTO_UDP, .ip_version = 4, .vlan = 4094}}) {
    const uint16_t size = 200;
    std::vector<uint8_t> frame(size - kFcsBytes, 0);
    build_frame(frame.data(), size, shape, flow_address(7, 2));
    size_t l3 = 14;
    if (shape.vlan) {
      EXPECT_EQ(frame[12] << 8 | frame[13], 0x8100);
      EXPECT_EQ((frame[14] << 8 | frame[15]) & 0x0fff, shape.vlan);
      l3 += 4;
    }
    EXPECT_EQ(frame[l3 - 2] << 8 | frame[l3 - 1], shape.ip_version == 6 ? 0x86DD : 0x0800);
    std::vector<uint8_t> pseudo;
    size_t l4;
    if (shape.ip_version == 6) {
      EXPECT_EQ(frame[l3] >> 4, 6);
      EXPECT_EQ(static_cast<size_t>(frame[l3 + 4] << 8 | frame[l3 + 5]), frame.size() - l3 - 40);  // payload length
      EXPECT_EQ(frame[l3 + 6], shape.protocol);
      EXPECT_EQ(frame[l3 + 8], 0x20);  // 2001:db8::, the documentation prefix
      EXPECT_EQ(frame[l3 + 9], 0x01);
      l4 = l3 + 40;
      pseudo.assign(frame.begin() + static_cast<long>(l3) + 8, frame.begin() + static_cast<long>(l3) + 40);
      uint32_t length = static_cast<uint32_t>(frame.size() - l4);
      pseudo.insert(pseudo.end(),
                    {static_cast<uint8_t>(length >> 24), static_cast<uint8_t>(length >> 16),
                     static_cast<uint8_t>(length >> 8), static_cast<uint8_t>(length), 0, 0, 0, shape.protocol});
    } else {
      EXPECT_EQ(frame[l3], 0x45);
      EXPECT_EQ(reference_checksum({frame.begin() + static_cast<long>(l3), frame.begin() + static_cast<long>(l3) + 20}),
                0);
      l4 = l3 + 20;
      pseudo.assign(frame.begin() + static_cast<long>(l3) + 12, frame.begin() + static_cast<long>(l3) + 20);
      uint16_t length = static_cast<uint16_t>(frame.size() - l4);
      pseudo.insert(pseudo.end(), {0, shape.protocol, static_cast<uint8_t>(length >> 8), static_cast<uint8_t>(length)});
    }
    pseudo.insert(pseudo.end(), frame.begin() + static_cast<long>(l4), frame.end());
    EXPECT_EQ(reference_checksum(pseudo), 0) << "L4 checksum, IPv" << int{shape.ip_version} << " vlan " << shape.vlan;
  }
  EXPECT_EQ(FrameShape{}.min_frame(), 64);
  EXPECT_EQ((FrameShape{.protocol = IPPROTO_UDP, .ip_version = 6}.min_frame()), 14 + 40 + 8 + 4);
  EXPECT_EQ((FrameShape{.protocol = IPPROTO_TCP, .ip_version = 6, .vlan = 1}.min_frame()), 14 + 4 + 40 + 20 + 4);
}

TEST(FrameBuilder, FlowsAreDistinctFiveTuples) {
  std::set<std::tuple<uint32_t, uint32_t, uint16_t, uint16_t>> seen;
  for (uint32_t f = 0; f < 100000; f++) {
    FlowAddress a = flow_address(f, 0);
    seen.insert({a.src_ip, a.dst_ip, a.src_port, a.dst_port});
  }
  EXPECT_EQ(seen.size(), 100000u);
  EXPECT_NE(flow_address(0, 0).dst_ip, flow_address(0, 1).dst_ip);  // chains are told apart by destination
}

TEST(FrameBuilder, SizeScheduleFollowsWeightsExactly) {
  std::vector<uint16_t> schedule = size_schedule({{64, 1}, {200, 2}, {1400, 1}}, 4096);
  std::map<uint16_t, int> counts;
  for (uint16_t s : schedule) counts[s]++;
  EXPECT_EQ(schedule.size(), 4096u);
  EXPECT_EQ(counts[64], 1024);
  EXPECT_EQ(counts[200], 2048);
  EXPECT_EQ(counts[1400], 1024);
  EXPECT_NE(schedule[0] == schedule[1] && schedule[1] == schedule[2] && schedule[2] == schedule[3], true);  // shuffled
}

}  // namespace
}  // namespace tandem
