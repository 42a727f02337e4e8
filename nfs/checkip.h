// The IPv4 and IPv6 header validation of the checkip NF, exposed for its unit tests.
#pragma once

#include <cstdint>

#include <rte_ip.h>

namespace tandem {
// True when the header is version 4, IHL >= 5, total length fits the frame's `l3_len` bytes and the checksum is right.
bool ipv4_header_valid(const rte_ipv4_hdr* ip, uint32_t l3_len);
// True when the header is version 6 and its payload length fits the frame's `l3_len` bytes (IPv6 has no checksum).
bool ipv6_header_valid(const rte_ipv6_hdr* ip, uint32_t l3_len);
}  // namespace tandem
