// Builds valid Ethernet/IPv4/UDP or TCP frames with correct checksums for the traffic generator.
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

// Writes headers into `frame` (frame_size - FCS bytes long) and computes the IPv4 and L4 checksums over
// whatever payload bytes the buffer holds. `protocol` is IPPROTO_UDP or IPPROTO_TCP.
void build_frame(uint8_t* frame, uint16_t frame_size, uint8_t protocol, const FlowAddress& flow);

// A cyclic table of frame sizes whose frequencies follow `weights` exactly over one cycle, shuffled with a
// fixed seed so that runs are repeatable.
std::vector<uint16_t> size_schedule(const std::vector<std::pair<uint16_t, double>>& weights, size_t length = 4096);

}  // namespace tandem
