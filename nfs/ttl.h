// The TTL decrement of the ttl NF, exposed for its unit test.
#pragma once

#include <rte_ip.h>

namespace tandem {
// Decrements TTL and patches the header checksum; returns false (and leaves the header) when TTL would reach 0.
bool decrement_ttl(rte_ipv4_hdr* ip);
}  // namespace tandem
