// Tests of the shared IP parser and the NFs on IPv6: extension headers, fragments, tags, and what ttl, checkip and the
// HTTP μNFs do with IPv6 (issue 35: IPv6 was dropped without a word).
#include "dataplane/packets/ip_view.h"
#include "nf_test_support.h"
#include "nfs/checkip.h"
#include "nfs/firewall_rules.h"

namespace tandem {
namespace {

using testing::fragment_at;
using testing::hop_by_hop;
using testing::Ipv6Extension;
using testing::make_ipv6_frame;
using testing::with_vlan_tag;

constexpr uint32_t kIpv6Header = 40;
constexpr uint32_t kL3 = sizeof(rte_ether_hdr);

TEST(IpView, FindsTcpBehindIpv6ExtensionHeadersAndTags) {
  Ipv6Extension destination_options{IPPROTO_DSTOPTS, std::vector<uint8_t>(16, 0)};
  destination_options.bytes[1] = 1;  // 16 bytes: one 8-byte unit beyond the first
  rte_mbuf* m = make_ipv6_frame(IPPROTO_TCP, "GET / HTTP/1.1\r\n\r\n", {hop_by_hop(), destination_options});
  IpInFrame ip = ip_in_frame(m);
  EXPECT_EQ(ip.version, 6);
  EXPECT_EQ(ip.l3_offset, kL3);
  EXPECT_EQ(ip.l4_protocol, IPPROTO_TCP);
  EXPECT_EQ(ip.l4_offset, kL3 + kIpv6Header + 8 + 16);
  EXPECT_FALSE(ip.fragment || ip.truncated);
  with_vlan_tag(with_vlan_tag(m, 7), 8, RTE_ETHER_TYPE_QINQ);
  ip = ip_in_frame(m);
  EXPECT_EQ(ip.l3_offset, kL3 + 8);
  EXPECT_EQ(ip.l4_offset, kL3 + 8 + kIpv6Header + 24);
  rte_pktmbuf_free(m);
}

TEST(IpView, OnlyTheFirstFragmentHasATransportHeader) {
  rte_mbuf* first = make_ipv6_frame(IPPROTO_UDP, "x", {fragment_at(0)});
  rte_mbuf* later = make_ipv6_frame(IPPROTO_UDP, "x", {fragment_at(3)});
  IpInFrame a = ip_in_frame(first), b = ip_in_frame(later);
  EXPECT_TRUE(a.fragment && b.fragment);
  EXPECT_EQ(a.l4_protocol, IPPROTO_UDP);
  EXPECT_EQ(a.l4_offset, kL3 + kIpv6Header + 8);
  EXPECT_EQ(b.l4_offset, 0u);
  testing::free_all({first, later});

  rte_mbuf* v4 = testing::make_frame(0, 64, IPPROTO_UDP);
  auto* header = rte_pktmbuf_mtod_offset(v4, rte_ipv4_hdr*, kL3);
  header->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG);
  EXPECT_TRUE(ip_in_frame(v4).fragment);
  EXPECT_NE(ip_in_frame(v4).l4_offset, 0u);  // the first fragment: its UDP header is there
  header->fragment_offset = rte_cpu_to_be_16(5);
  EXPECT_EQ(ip_in_frame(v4).l4_offset, 0u);
  rte_pktmbuf_free(v4);
}

TEST(IpView, TooManyExtensionsOrOneThatRunsPastThePacketHaveNoTransportHeader) {
  std::vector<Ipv6Extension> many(kMaxIpv6ExtensionHeaders + 1, {IPPROTO_DSTOPTS, std::vector<uint8_t>(8, 0)});
  rte_mbuf* evasive = make_ipv6_frame(IPPROTO_TCP, "", many);
  EXPECT_EQ(ip_in_frame(evasive).version, 6);
  EXPECT_EQ(ip_in_frame(evasive).l4_offset, 0u);
  Ipv6Extension long_claim{IPPROTO_HOPOPTS, {0, 200, 0, 0, 0, 0, 0, 0}};  // says 1,608 bytes
  rte_mbuf* lying = make_ipv6_frame(IPPROTO_TCP, "", {long_claim});
  EXPECT_EQ(ip_in_frame(lying).l4_offset, 0u);
  rte_mbuf* cut = make_ipv6_frame(IPPROTO_TCP, "GET / HTTP/1.1\r\n\r\n");
  rte_pktmbuf_trim(cut, 30);
  EXPECT_TRUE(ip_in_frame(cut).truncated);
  rte_mbuf* short_header = make_ipv6_frame(IPPROTO_TCP);
  rte_pktmbuf_trim(short_header, static_cast<uint16_t>(rte_pktmbuf_data_len(short_header) - kL3 - 20));
  EXPECT_EQ(ip_in_frame(short_header).version, 0);
  testing::free_all({evasive, lying, cut, short_header});
}

TEST(Ipv6, TtlDecrementsTheHopLimitAndDropsAtZero) {
  auto ttl = testing::make_nf("ttl");
  rte_mbuf* plenty = make_ipv6_frame(IPPROTO_UDP, "", {}, 64);
  rte_mbuf* last_hop = make_ipv6_frame(IPPROTO_UDP, "", {}, 1);
  auto out = testing::run_batch(*ttl, {plenty, last_hop});
  EXPECT_EQ(out.dropped, 1);
  ASSERT_EQ(out.kept.size(), 1u);
  EXPECT_EQ(ip_in_frame(out.kept[0]).ipv6->hop_limits, 63);
  testing::free_all(out.kept);
}

TEST(Ipv6, CheckipKeepsAValidHeaderAndDropsABadVersionOrALength) {
  auto checkip = testing::make_nf("checkip");
  rte_mbuf* good = make_ipv6_frame(IPPROTO_TCP, "payload", {hop_by_hop()});
  rte_mbuf* version = make_ipv6_frame(IPPROTO_TCP);
  rte_pktmbuf_mtod_offset(version, uint8_t*, kL3)[0] = 5 << 4;
  rte_mbuf* too_long = make_ipv6_frame(IPPROTO_TCP);
  rte_pktmbuf_mtod_offset(too_long, rte_ipv6_hdr*, kL3)->payload_len = rte_cpu_to_be_16(1000);
  auto out = testing::run_batch(*checkip, {good, version, too_long});
  EXPECT_EQ(out.dropped, 2);
  ASSERT_EQ(out.kept.size(), 1u);
  EXPECT_EQ(out.kept[0], good);
  testing::free_all(out.kept);
}

TEST(Ipv6, TheHttpMnfsReadRequestsOverIpv6) {
  auto classifier = testing::make_nf("http_classifier");
  auto validator = testing::make_nf("validate_url");
  std::string attack = "GET /item?id=1%27%20OR%20%271%27%3D%271 HTTP/1.1\r\nHost: h\r\n\r\n";
  std::vector<rte_mbuf*> frames = {make_ipv6_frame(IPPROTO_TCP, "GET /index.html HTTP/1.1\r\nHost: h\r\n\r\n"),
                                   make_ipv6_frame(IPPROTO_TCP, attack, {hop_by_hop()}),
                                   make_ipv6_frame(IPPROTO_UDP, "GET / HTTP/1.1\r\n\r\n")};
  auto labelled = testing::run_batch(*classifier, frames);
  ASSERT_EQ(labelled.kept.size(), 3u);
  EXPECT_EQ(labelled.gates, (std::vector<uint8_t>{1, 1, 0}));  // http, http, other (UDP)
  auto validated = testing::run_batch(*validator, labelled.kept);
  EXPECT_EQ(validated.dropped, 1);  // the SQL injection, behind its hop-by-hop header
  testing::free_all(validated.kept);
}

TEST(Ipv6Rules, ParseByFamilyAndRefuseMixedOrLongPrefixes) {
  SpecErrors errors;
  auto rule =
      parse_firewall_rule(json{{"src", "2001:db8::ff/32"}, {"proto", "icmpv6"}, {"action", "deny"}}, "r", errors);
  ASSERT_TRUE(rule.has_value());
  EXPECT_EQ(rule->family, IpFamily::V6);
  EXPECT_EQ(rule->src_prefix, 32);
  EXPECT_EQ(rule->src_ip6[3], 0xb8);
  EXPECT_EQ(rule->src_ip6[15], 0);  // host bits cleared
  EXPECT_EQ(rule->proto, IPPROTO_ICMPV6);
  EXPECT_EQ(parse_firewall_rule(json{{"dst_port", 80}, {"action", "deny"}}, "r", errors)->family, IpFamily::Any);
  EXPECT_TRUE(errors.empty());
  EXPECT_FALSE(
      parse_firewall_rule(json{{"src", "10.0.0.0/8"}, {"dst", "2001:db8::/32"}, {"action", "deny"}}, "m", errors));
  EXPECT_FALSE(parse_firewall_rule(json{{"src", "2001:db8::/129"}, {"action", "deny"}}, "l", errors));
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].path.substr(0, 2), "m.");  // whichever address is read second
  EXPECT_NE(errors[0].message.find("family"), std::string::npos);
  EXPECT_EQ(errors[1].path, "l.src");
}

TEST(Ipv6Rules, TheFirewallMatchesIpv6RulesBehindExtensionHeadersAndLeavesIpv4ToIpv4Rules) {
  // 2001:db8::1 port 40000 to port 80 (make_ipv6_frame); make_frame's flows come from 10.0.0.x to port 8080.
  json rules = json::array({{{"src", "2001:db8::1/128"}, {"dst_port", 80}, {"proto", "tcp"}, {"action", "deny"}}});
  auto firewall = testing::make_nf("firewall", {{"rules", rules}});
  auto out =
      testing::run_batch(*firewall, {make_ipv6_frame(IPPROTO_TCP), make_ipv6_frame(IPPROTO_TCP, "", {hop_by_hop()}),
                                     make_ipv6_frame(IPPROTO_UDP), testing::make_frame(0, 64, IPPROTO_TCP)});
  EXPECT_EQ(out.dropped, 2);  // both TCP frames to port 80; the UDP one and the IPv4 one pass
  EXPECT_EQ(firewall->report()["denied_unreadable"], 0);
  testing::free_all(out.kept);

  // An allow-all IPv4 rule is IPv4's (as nftables' ip saddr): IPv6 meets the default; a port rule matches both.
  auto v4_only = testing::make_nf(
      "firewall", {{"rules", json::array({{{"src", "0.0.0.0/0"}, {"action", "allow"}}})}, {"default", "deny"}});
  out = testing::run_batch(*v4_only, {make_ipv6_frame(IPPROTO_TCP), testing::make_frame(0)});
  EXPECT_EQ(out.dropped, 1);
  EXPECT_EQ(v4_only->report()["denied_unreadable"], 0);
  testing::free_all(out.kept);
  auto by_port = testing::make_nf("firewall", {{"rules", json::array({{{"dst_port", 80}, {"action", "deny"}}})}});
  out = testing::run_batch(*by_port, {make_ipv6_frame(IPPROTO_TCP), make_ipv6_frame(IPPROTO_UDP)});
  EXPECT_EQ(out.dropped, 2);
  testing::free_all(out.kept);
}

TEST(Ipv6Rules, ALaterFragmentIsUnreadableToTheFirewall) {
  auto firewall = testing::make_nf("firewall", {{"rules", json::array({{{"dst_port", 80}, {"action", "allow"}}})}});
  auto out = testing::run_batch(*firewall, {make_ipv6_frame(IPPROTO_UDP, "x", {fragment_at(3)}),
                                            make_ipv6_frame(IPPROTO_UDP, "x", {fragment_at(0)})});
  EXPECT_EQ(out.dropped, 1);
  EXPECT_EQ(firewall->report()["denied_unreadable"], 1);
  testing::free_all(out.kept);
}

TEST(Ipv6Rules, TheFlowClassifierSendsIpv6ToItsSfc) {
  json rules = json::array({{{"sfc", "v6"}, {"src", "2001:db8::/64"}}, {{"sfc", "v4"}, {"src", "10.0.0.0/8"}}});
  auto classifier = testing::make_nf("flow_classifier", {{"rules", rules}});
  auto out = testing::run_batch(*classifier, {make_ipv6_frame(IPPROTO_TCP), testing::make_frame(0)});
  ASSERT_EQ(out.kept.size(), 2u);
  EXPECT_NE(out.gates[0], out.gates[1]);
  testing::free_all(out.kept);
}

}  // namespace
}  // namespace tandem
