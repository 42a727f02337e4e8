// Tests of the NFs on frames as real hosts and switches send them: 802.1Q and QinQ tags, IPv4 options.
#include "dataplane/packets/five_tuple.h"
#include "dataplane/packets/request_frames.h"
#include "nf_test_support.h"
#include "nfs/checkip.h"

namespace tandem {
namespace {

using testing::with_ipv4_options;
using testing::with_vlan_tag;

// Flow f has source 10.0.0.(f+1) and source port 1024+f, destination 192.168.0.1:8080 (see flow_address).
std::vector<rte_mbuf*> unusual_frames(uint32_t flow, uint8_t protocol = IPPROTO_UDP) {
  return {with_ipv4_options(testing::make_frame(flow, 64, protocol)),
          with_vlan_tag(testing::make_frame(flow, 64, protocol), 100),
          with_vlan_tag(with_vlan_tag(testing::make_frame(flow, 64, protocol), 100), 200, RTE_ETHER_TYPE_QINQ),
          with_vlan_tag(with_ipv4_options(testing::make_frame(flow, 64, protocol)), 7)};
}

TEST(TaggedFrames, TheFiveTupleIsFoundBehindTagsAndOptions) {
  for (rte_mbuf* m : unusual_frames(3, IPPROTO_TCP)) {
    std::optional<FiveTuple> tuple = five_tuple_of(m);
    ASSERT_TRUE(tuple.has_value());
    EXPECT_EQ(tuple->src_ip, RTE_IPV4(10, 0, 0, 4));
    EXPECT_EQ(tuple->src_port, 1027);
    EXPECT_EQ(tuple->dst_port, 8080);
    EXPECT_EQ(tuple->proto, IPPROTO_TCP);
    rte_pktmbuf_free(m);
  }
}

TEST(TaggedFrames, AnAllowAllFirewallPassesThemAndPortRulesSeePastTheOptions) {
  auto allow_all =
      testing::make_nf("firewall", {{"rules", json::array({{{"src", "0.0.0.0/0"}, {"action", "allow"}}})}});
  auto out = testing::run_batch(*allow_all, unusual_frames(0));
  EXPECT_EQ(out.dropped, 0);
  testing::free_all(out.kept);

  // Flow 2's source port is 1026: the rule matches only if the ports are read after the options and the tags.
  json rules = json::array({{{"src_port", 1026}, {"proto", "udp"}, {"action", "deny"}}});
  auto by_port = testing::make_nf("firewall", {{"rules", rules}});
  out = testing::run_batch(*by_port, unusual_frames(2));
  EXPECT_EQ(out.dropped, 4);
  out = testing::run_batch(*by_port, unusual_frames(3));
  EXPECT_EQ(out.dropped, 0);
  EXPECT_EQ(by_port->report()["denied_unreadable"], 0);
  testing::free_all(out.kept);
}

TEST(TaggedFrames, ThreeTagsOrAFrameCutInsideTheHeaderAreUnreadableAndCountedSo) {
  rte_mbuf* three_tags = with_vlan_tag(with_vlan_tag(with_vlan_tag(testing::make_frame(0), 1), 2), 3);
  rte_mbuf* cut = with_vlan_tag(testing::make_frame(0), 1);
  rte_pktmbuf_trim(cut, static_cast<uint16_t>(rte_pktmbuf_data_len(cut) - 30));  // Ethernet, tag, 12 bytes of IP
  auto nf = testing::make_nf("firewall");
  auto out = testing::run_batch(*nf, {three_tags, cut});
  EXPECT_EQ(out.dropped, 2);
  EXPECT_EQ(nf->report()["denied_unreadable"], 2);
}

TEST(TaggedFrames, CheckipValidatesTheHeaderWithItsOptionsBehindTags) {
  auto nf = testing::make_nf("checkip");
  std::vector<rte_mbuf*> good = unusual_frames(1);
  auto out = testing::run_batch(*nf, good);
  EXPECT_EQ(out.dropped, 0);
  for (rte_mbuf* m : out.kept) ipv4_header(m)->hdr_checksum ^= rte_cpu_to_be_16(0x0100);  // now every one is bad
  out = testing::run_batch(*nf, out.kept);
  EXPECT_EQ(out.dropped, 4);
}

TEST(TaggedFrames, TtlDecrementsBehindTagsAndKeepsTheChecksumValid) {
  auto nf = testing::make_nf("ttl");
  std::vector<rte_mbuf*> frames = unusual_frames(1);
  std::vector<uint8_t> before;
  for (rte_mbuf* m : frames) before.push_back(ipv4_header(m)->time_to_live);
  auto out = testing::run_batch(*nf, frames);
  ASSERT_EQ(out.kept.size(), frames.size());
  for (size_t i = 0; i < out.kept.size(); i++) {
    Ipv4InFrame ip = ipv4_in_frame(out.kept[i]);
    EXPECT_EQ(ip.header->time_to_live, before[i] - 1);
    EXPECT_TRUE(ipv4_header_valid(ip.header, rte_pktmbuf_data_len(out.kept[i]) - ip.offset));
  }
  testing::free_all(out.kept);
}

TEST(TaggedFrames, TheHttpMicroNfsReadARequestBehindATagAndOptions) {
  rte_mbuf* tagged = with_vlan_tag(testing::make_tcp_frame_with(http_request("/tagged")), 42);
  rte_mbuf* options = with_ipv4_options(testing::make_tcp_frame_with(http_request("/options")));
  auto count = testing::make_nf("count_url");
  auto out = testing::run_batch(*count, {tagged, options});
  json report = count->report();
  EXPECT_EQ(report["urls"], 2);
  EXPECT_EQ(report["not_http"], 0);
  auto validate = testing::make_nf("validate_url");
  rte_mbuf* attack = with_vlan_tag(testing::make_tcp_frame_with(http_request("/item?id=1'+or+'1'='1")), 42);
  auto checked = testing::run_batch(*validate, {attack});
  EXPECT_EQ(checked.dropped, 1);
  testing::free_all(out.kept);
}

}  // namespace
}  // namespace tandem
