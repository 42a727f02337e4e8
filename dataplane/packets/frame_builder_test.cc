// Tests of generated frames: header fields, IPv4 and UDP/TCP checksums, flows, and the size schedule.
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
