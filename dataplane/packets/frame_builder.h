// Builds valid Ethernet (802.1Q-tagged or not)/IPv4 or IPv6/UDP or TCP frames with correct checksums for the
// traffic generator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tandem {

inline constexpr uint16_t kFcsBytes = 4;  // frame sizes in specs include the FCS, as the papers' "64 B"
inline constexpr uint16_t kMinFrame = 64;
inline constexpr uint16_t kMaxFrame = 1518;

struct FlowAddress {
  uint32_t src_ip, dst_ip;  // host byte order
  uint16_t src_port, dst_port;
};

// Flow i of a chain's traffic: distinct 5-tuples 10.x.y.z:port -> 192.168.c.1:8080 (c = chain index).
FlowAddress flow_address(uint32_t flow, uint16_t chain);

// What every frame of a chain's traffic is made of besides its flow and size.
struct FrameShape {
  uint8_t protocol = 17;   // IPPROTO_UDP or IPPROTO_TCP
  uint8_t ip_version = 4;  // 4, or 6: the flow's IPv4 addresses in the last 32 bits of 2001:db8:: (source) and
                           // 2001:db8:1:: (destination), as RFC 6052 embeds IPv4 in IPv6
  uint16_t vlan = 0;       // an 802.1Q tag with this VLAN id (1-4094) after the MAC addresses; 0: untagged

  // The bytes of its headers: Ethernet (and the tag), IP, UDP or TCP.
  uint16_t header_bytes() const;
  // The smallest frame (with FCS) that holds them: 64 B, or more for IPv6 and tags.
  uint16_t min_frame() const;
};

// Writes headers into `frame` (frame_size - FCS bytes long, at least shape.min_frame()) and computes the IPv4 and
// L4 checksums over whatever payload bytes the buffer holds.
void build_frame(uint8_t* frame, uint16_t frame_size, const FrameShape& shape, const FlowAddress& flow);
// An untagged IPv4 frame; `protocol` is IPPROTO_UDP or IPPROTO_TCP.
inline void build_frame(uint8_t* frame, uint16_t frame_size, uint8_t protocol, const FlowAddress& flow) {
  build_frame(frame, frame_size, FrameShape{.protocol = protocol}, flow);
}

// A cyclic table of frame sizes whose frequencies follow `weights` exactly over one cycle, shuffled with a
// fixed seed so that runs are repeatable.
std::vector<uint16_t> size_schedule(const std::vector<std::pair<uint16_t, double>>& weights, size_t length = 4096);

}  // namespace tandem
