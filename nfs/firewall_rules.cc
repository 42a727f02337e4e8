// Parsing of firewall rules: address prefixes, port ranges, protocol and action.
#include "firewall_rules.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>

namespace tandem {

namespace {

// An IPv4 or IPv6 address with an optional prefix length (the whole address without one), its host bits cleared.
// Returns the family, or nullopt for text that is neither.
std::optional<IpFamily> parse_prefix(const std::string& text, uint32_t& ip, std::array<uint8_t, 16>& ip6,
                                     uint8_t& prefix) {
  std::string address = text;
  int bits = -1;
  if (auto slash = text.find('/'); slash != std::string::npos) {
    address = text.substr(0, slash);
    auto tail = text.substr(slash + 1);
    auto [end, ec] = std::from_chars(tail.data(), tail.data() + tail.size(), bits);
    if (ec != std::errc() || end != tail.data() + tail.size() || bits < 0) return std::nullopt;
  }
  in_addr parsed{};
  if (inet_pton(AF_INET, address.c_str(), &parsed) == 1) {
    if (bits > 32) return std::nullopt;
    prefix = static_cast<uint8_t>(bits < 0 ? 32 : bits);
    ip = ntohl(parsed.s_addr);
    if (prefix < 32) ip &= prefix == 0 ? 0 : ~((1u << (32 - prefix)) - 1);
    return IpFamily::V4;
  }
  in6_addr parsed6{};
  if (inet_pton(AF_INET6, address.c_str(), &parsed6) != 1 || bits > 128) return std::nullopt;
  prefix = static_cast<uint8_t>(bits < 0 ? 128 : bits);
  for (int i = 0; i < 16; i++) {
    int kept = std::clamp(prefix - 8 * i, 0, 8);  // bits of byte i inside the prefix
    ip6[i] = static_cast<uint8_t>(parsed6.s6_addr[i] & (0xff00 >> kept));
  }
  return IpFamily::V6;
}

bool parse_port_range(const json& value, uint16_t& lo, uint16_t& hi) {
  auto valid = [](long long p) { return p >= 0 && p <= 65535; };
  if (value.is_number_integer()) {
    long long port = value.get<long long>();
    if (!valid(port)) return false;
    lo = hi = static_cast<uint16_t>(port);
    return true;
  }
  if (!value.is_string()) return false;
  std::string text = value.get<std::string>();
  auto dash = text.find('-');
  if (dash == std::string::npos) return false;
  long long a = -1, b = -1;
  auto [e1, ec1] = std::from_chars(text.data(), text.data() + dash, a);
  auto [e2, ec2] = std::from_chars(text.data() + dash + 1, text.data() + text.size(), b);
  if (ec1 != std::errc() || ec2 != std::errc() || e1 != text.data() + dash || e2 != text.data() + text.size())
    return false;
  if (!valid(a) || !valid(b) || a > b) return false;
  lo = static_cast<uint16_t>(a);
  hi = static_cast<uint16_t>(b);
  return true;
}

}  // namespace

std::optional<FirewallRule> parse_firewall_rule(const json& rule, const std::string& path, SpecErrors& errors) {
  if (!rule.is_object()) {
    errors.push_back({path, "a rule must be a mapping with src, dst, src_port, dst_port, proto and action"});
    return std::nullopt;
  }
  FirewallRule out;
  size_t errors_before = errors.size();
  for (const auto& [key, value] : rule.items()) {
    std::string where = path + "." + key;
    if (key == "src" || key == "dst") {
      bool source = key == "src";
      std::optional<IpFamily> family =
          value.is_string() ? parse_prefix(value, source ? out.src_ip : out.dst_ip, source ? out.src_ip6 : out.dst_ip6,
                                           source ? out.src_prefix : out.dst_prefix)
                            : std::nullopt;
      if (!family)
        errors.push_back({where, "must be an IPv4 or IPv6 address or prefix such as 10.0.0.0/8 or 2001:db8::/32, got " +
                                     value.dump()});
      else if (out.family != IpFamily::Any && out.family != *family)
        errors.push_back({where,
                          "is of another IP family than the rule's other address (src and dst: both IPv4 or "
                          "both IPv6)"});
      else
        out.family = *family;
    } else if (key == "src_port" || key == "dst_port") {
      bool ok = key == "src_port" ? parse_port_range(value, out.src_port_lo, out.src_port_hi)
                                  : parse_port_range(value, out.dst_port_lo, out.dst_port_hi);
      if (!ok)
        errors.push_back({where, "must be a port 0-65535 or a range such as \"1024-2047\", got " + value.dump()});
    } else if (key == "proto") {
      std::string p = value.is_string() ? value.get<std::string>() : "";
      if (p == "tcp")
        out.proto = IPPROTO_TCP;
      else if (p == "udp")
        out.proto = IPPROTO_UDP;
      else if (p == "icmp")
        out.proto = IPPROTO_ICMP;
      else if (p == "icmpv6")
        out.proto = IPPROTO_ICMPV6;
      else if (p != "any")
        errors.push_back({where, "must be one of tcp, udp, icmp, icmpv6, any, got " + value.dump()});
    } else if (key == "action") {
      std::string a = value.is_string() ? value.get<std::string>() : "";
      if (a != "allow" && a != "deny") errors.push_back({where, "must be allow or deny, got " + value.dump()});
      out.allow = a == "allow";
    } else {
      errors.push_back({where, "unknown rule field (known: src, dst, src_port, dst_port, proto, action)"});
    }
  }
  if (!rule.contains("action")) errors.push_back({path + ".action", "is required (allow or deny)"});
  if (errors.size() != errors_before) return std::nullopt;
  return out;
}

std::vector<FirewallRule> firewall_rules_from_args(const json& args) {
  std::vector<FirewallRule> rules;
  SpecErrors ignored;  // arguments were checked before the NF was created
  for (const auto& rule : args["rules"])
    if (auto parsed = parse_firewall_rule(rule, "", ignored)) rules.push_back(*parsed);
  uint32_t synthetic = args["synthetic_rules"].get<uint32_t>();
  for (uint32_t i = 0; i < synthetic; i++) {
    FirewallRule r;
    r.src_ip = (172u << 24) | (16u << 16) | (i & 0xfffff);  // 172.16.0.0/12: never generated
    r.src_prefix = 32;
    r.family = IpFamily::V4;
    r.dst_port_lo = r.dst_port_hi = static_cast<uint16_t>(1 + i % 65535);
    r.proto = (i % 2) ? IPPROTO_TCP : IPPROTO_UDP;
    r.allow = false;
    rules.push_back(r);
  }
  return rules;
}

}  // namespace tandem
