// A 5-tuple ACL on DPDK's rte_acl for IPv4 and IPv6 (the layouts of DPDK's examples/l3fwd-acl), one context each:
// each rule a match and a value, the first matching rule winning. A rule with an IPv4 address goes to the IPv4
// context, one with an IPv6 address to the IPv6 one, one with neither to both. The firewall's verdicts and the flow
// classifier's SFCs are its values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <rte_acl.h>

#include "contract/batch.h"
#include "firewall_rules.h"

namespace tandem {

class FlowAcl {
 public:
  static constexpr uint32_t kNoMatch = UINT32_MAX;  // no rule matched the packet
  // Neither IPv4 nor IPv6 (behind at most two VLAN tags), too short to hold a header and the 4 bytes after it (UDP's
  // and TCP's ports), or IPv6 without a transport header to read (a later fragment, more than 8 extension headers):
  // no rule can see it. IPv4 options and IPv6 extension headers are readable: the ports are found after them.
  static constexpr uint32_t kUnreadable = UINT32_MAX - 1;

  // `values[i]` is what a packet matching `rules[i]` (and no earlier rule) classifies as: same size (no rules: every
  // readable packet is kNoMatch), values below kUnreadable. `name` must be unique in the process (rte_acl's context
  // name).
  FlowAcl(const std::string& name, const std::vector<FirewallRule>& rules, const std::vector<uint32_t>& values);
  ~FlowAcl();
  FlowAcl(const FlowAcl&) = delete;
  FlowAcl& operator=(const FlowAcl&) = delete;

  // out[i]: the value of the batch's packet i, kNoMatch or kUnreadable.
  void classify(const Batch& batch, uint32_t* out) const;

  // Frees the contexts an instance made under `name` and left behind (its process gone, or it retired without its
  // destructor); returns how many there were.
  static int release(const std::string& name);

 private:
  rte_acl_ctx* acl_ = nullptr;   // IPv4; none without rules for it
  rte_acl_ctx* acl6_ = nullptr;  // IPv6; likewise
};

}  // namespace tandem
