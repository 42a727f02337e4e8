// The TTL and hop-limit decrements of the ttl NF, exposed for its unit tests.
#pragma once

#include <rte_ip.h>

namespace tandem {
// Decrements TTL and patches the header checksum; returns false (and leaves the header) when TTL would reach 0.
bool decrement_ttl(rte_ipv4_hdr* ip);
// Decrements IPv6's hop limit; returns false (and leaves the header) when it would reach 0.
bool decrement_hop_limit(rte_ipv6_hdr* ip);
}  // namespace tandem
