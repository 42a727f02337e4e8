// Parsing of the firewall NF's L3/L4 rules from a spec, independent of the ACL engine that runs them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "contract/arg_schema.h"

namespace tandem {

// Which packets a rule is for: an IPv4 address in it makes it IPv4's, an IPv6 address IPv6's (as nftables' `ip saddr`
// and `ip6 saddr`); one with no address matches both.
enum class IpFamily { Any, V4, V6 };

struct FirewallRule {
  IpFamily family = IpFamily::Any;
  uint32_t src_ip = 0;  // IPv4, host byte order
  uint8_t src_prefix = 0;
  uint32_t dst_ip = 0;
  uint8_t dst_prefix = 0;
  std::array<uint8_t, 16> src_ip6{}, dst_ip6{};  // IPv6, network byte order; the prefixes above up to 128
  uint16_t src_port_lo = 0, src_port_hi = 65535;
  uint16_t dst_port_lo = 0, dst_port_hi = 65535;
  std::optional<uint8_t> proto;  // nullopt = any protocol
  bool allow = true;
};

// Parses one rule such as {src: 10.0.0.0/8, dst_port: 80-90, proto: tcp, action: deny} or {src: 2001:db8::/32, ...};
// errors are appended with `path` as prefix and nullopt is returned.
std::optional<FirewallRule> parse_firewall_rule(const json& rule, const std::string& path, SpecErrors& errors);

// The rules of a firewall NF: the explicit ones, then `synthetic_rules` deny rules that match nothing the
// generator sends (addresses in 172.16.0.0/12), to give the classifier a realistic rule-set size.
std::vector<FirewallRule> firewall_rules_from_args(const json& args);

}  // namespace tandem
