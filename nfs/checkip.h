// The IPv4 header validation of the checkip NF, exposed for its unit test.
#pragma once

#include <cstdint>

#include <rte_ip.h>

namespace tandem {
// True when the header is version 4, IHL >= 5, total length fits the frame's `l3_len` bytes and the checksum is right.
bool ipv4_header_valid(const rte_ipv4_hdr* ip, uint32_t l3_len);
}  // namespace tandem
