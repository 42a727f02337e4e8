// Tests of the firewall NF: rule parsing and rte_acl matching of allow/deny rules on the 5-tuple.
#include "nfs/firewall_rules.h"

#include "nf_test_support.h"

namespace tandem {
namespace {

TEST(FirewallRules, ParsesPrefixesPortsAndProtocols) {
  SpecErrors errors;
  auto rule = parse_firewall_rule(
      json{{"src", "10.1.2.0/24"}, {"dst_port", "80-90"}, {"proto", "tcp"}, {"action", "deny"}}, "r", errors);
  ASSERT_TRUE(rule.has_value());
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(rule->src_ip, (10u << 24) | (1u << 16) | (2u << 8));
  EXPECT_EQ(rule->src_prefix, 24);
  EXPECT_EQ(rule->dst_port_lo, 80);
  EXPECT_EQ(rule->dst_port_hi, 90);
  EXPECT_EQ(rule->proto, IPPROTO_TCP);
  EXPECT_FALSE(rule->allow);
}

TEST(FirewallRules, NamesTheBadField) {
  SpecErrors errors;
  EXPECT_FALSE(parse_firewall_rule(json{{"src", "10.1.2.0/33"}, {"action", "deny"}}, "rules[0]", errors));
  EXPECT_FALSE(parse_firewall_rule(json{{"dst_port", "90-80"}, {"action", "allow"}}, "rules[1]", errors));
  EXPECT_FALSE(parse_firewall_rule(json{{"colour", "red"}, {"action", "allow"}}, "rules[2]", errors));
  EXPECT_FALSE(parse_firewall_rule(json{{"src", "10.0.0.1"}}, "rules[3]", errors));
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_EQ(errors[0].path, "rules[0].src");
  EXPECT_EQ(errors[1].path, "rules[1].dst_port");
  EXPECT_EQ(errors[2].path, "rules[2].colour");
  EXPECT_EQ(errors[3].path, "rules[3].action");
}

// Flow f has source 10.0.0.(f+1) and source port 1024+f, destination 192.168.0.1:8080.
TEST(Firewall, FirstMatchingRuleWinsAndDefaultApplies) {
  json rules = json::array({
      {{"src", "10.0.0.2"}, {"action", "allow"}},                               // flow 1: allowed before the /24 deny
      {{"src", "10.0.0.0/24"}, {"src_port", "1026-1030"}, {"action", "deny"}},  // flows 2..6
      {{"dst", "192.168.0.0/16"}, {"proto", "tcp"}, {"action", "deny"}},        // any TCP flow
  });
  auto nf = testing::make_nf("firewall", {{"rules", rules}, {"synthetic_rules", 200}});
  std::vector<rte_mbuf*> frames = {testing::make_frame(0), testing::make_frame(1),
                                   testing::make_frame(2), testing::make_frame(6),
                                   testing::make_frame(7), testing::make_frame(8, 64, IPPROTO_TCP)};
  std::vector<rte_mbuf*> expected_kept = {frames[0], frames[1], frames[4]};
  auto out = testing::run_batch(*nf, frames);
  EXPECT_EQ(out.kept, expected_kept);
  EXPECT_EQ(out.dropped, 3);
  EXPECT_EQ(nf->report()["allowed"], 3);
  EXPECT_EQ(nf->report()["denied"], 3);
  testing::free_all(out.kept);
}

TEST(Firewall, DefaultDenyDropsUnmatched) {
  auto nf = testing::make_nf(
      "firewall",
      {{"rules", json::array({{{"dst_port", 8080}, {"proto", "udp"}, {"action", "allow"}}})}, {"default", "deny"}});
  rte_mbuf* udp = testing::make_frame(0);
  rte_mbuf* tcp = testing::make_frame(0, 64, IPPROTO_TCP);
  auto out = testing::run_batch(*nf, {udp, tcp});
  ASSERT_EQ(out.kept.size(), 1u);
  EXPECT_EQ(out.kept[0], udp);
  testing::free_all(out.kept);
}

TEST(Firewall, NoRulesAppliesTheDefault) {
  auto allow_all = testing::make_nf("firewall");
  auto deny_all = testing::make_nf("firewall", {{"default", "deny"}});
  auto allowed = testing::run_batch(*allow_all, {testing::make_frame(1), testing::make_frame(2)});
  EXPECT_EQ(allowed.kept.size(), 2u);
  auto denied = testing::run_batch(*deny_all, allowed.kept);
  EXPECT_EQ(denied.dropped, 2);
}

}  // namespace
}  // namespace tandem
