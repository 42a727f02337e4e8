// Tests of the generator's HTTP request frames (dataplane/packets/request_frames.h) as the HTTP NFs read them: each
// flow's frame carries its URL's request, sized to it, with valid checksums.
#include "dataplane/packets/request_frames.h"

#include <rte_ip.h>
#include <rte_tcp.h>

#include "checkip.h"
#include "dataplane/packets/packet_test_support.h"
#include "http_request.h"

namespace tandem {
namespace {

TEST(RequestFrames, EachFlowCarriesItsRequestWithValidChecksums) {
  std::string long_url = "/search?q=" + std::string(300, 'x');
  FrameList frames = request_frames({"/", "/index.html", long_url}, 2);
  ASSERT_FALSE(frames.empty());
  for (uint32_t flow = 0; flow < 3; flow++) {
    rte_mbuf* m = rte_pktmbuf_alloc(testing::test_pool());
    uint16_t length = frames.frame_size(flow) - kFcsBytes;
    m->data_len = m->pkt_len = length;
    memcpy(rte_pktmbuf_mtod(m, uint8_t*), frames.frame(flow), length);
    auto line = http_request_line(m);
    ASSERT_TRUE(line) << flow;
    EXPECT_EQ(line->url, (std::vector<std::string>{"/", "/index.html", long_url}[flow]));
    EXPECT_EQ(frames.frame_size(flow), std::max<size_t>(64, 54 + http_request(std::string(line->url)).size() + 4));
    auto* ip = rte_pktmbuf_mtod_offset(m, rte_ipv4_hdr*, sizeof(rte_ether_hdr));
    EXPECT_TRUE(ipv4_header_valid(ip, length - sizeof(rte_ether_hdr)));
    EXPECT_EQ(rte_ipv4_udptcp_cksum_verify(ip, ip + 1), 0);
    EXPECT_EQ(rte_be_to_cpu_32(ip->dst_addr) & 0xff00, 2u << 8);  // chain 2's flow addresses (flow_address)
    rte_pktmbuf_free(m);
  }
  EXPECT_THROW(request_frames({"/" + std::string(1500, 'a')}, 0), std::invalid_argument);
}

TEST(RequestFrames, AnEmptyUrlIsABareSegmentThatIsNoRequest) {
  FrameList frames = request_frames({"/", ""}, 0);
  EXPECT_EQ(frames.frame_size(1), 64);  // headers only, padded to the minimum frame
  rte_mbuf* m = rte_pktmbuf_alloc(testing::test_pool());
  m->data_len = m->pkt_len = frames.frame_size(1) - kFcsBytes;
  memcpy(rte_pktmbuf_mtod(m, uint8_t*), frames.frame(1), m->data_len);
  EXPECT_FALSE(http_request_line(m));
  auto* ip = rte_pktmbuf_mtod_offset(m, rte_ipv4_hdr*, sizeof(rte_ether_hdr));
  EXPECT_EQ(ip->next_proto_id, IPPROTO_TCP);
  EXPECT_EQ(rte_ipv4_udptcp_cksum_verify(ip, ip + 1), 0);
  rte_pktmbuf_free(m);
}

TEST(RequestFrames, OverIpv6InATagTheRequestsAreReadAsOverIpv4) {
  std::vector<std::string> urls = {"/", "/index.html?q=1", ""};
  FrameList frames = request_frames(urls, 1, FrameShape{.protocol = IPPROTO_UDP, .ip_version = 6, .vlan = 7});
  for (uint32_t flow = 0; flow < urls.size(); flow++) {
    rte_mbuf* m = rte_pktmbuf_alloc(testing::test_pool());
    m->data_len = m->pkt_len = frames.frame_size(flow) - kFcsBytes;
    memcpy(rte_pktmbuf_mtod(m, uint8_t*), frames.frame(flow), m->data_len);
    auto line = http_request_line(m);
    EXPECT_EQ(line.has_value(), !urls[flow].empty()) << flow;
    if (line) EXPECT_EQ(line->url, urls[flow]);
    auto* ip = rte_pktmbuf_mtod_offset(m, rte_ipv6_hdr*, sizeof(rte_ether_hdr) + sizeof(rte_vlan_hdr));
    EXPECT_EQ(ip->proto, IPPROTO_TCP);  // HTTP is TCP whatever the shape says
    EXPECT_EQ(rte_ipv6_udptcp_cksum_verify(ip, ip + 1), 0);
    EXPECT_EQ(frames.frame_size(flow),
              std::max<size_t>(64, 14 + 4 + 40 + 20 + (urls[flow].empty() ? 0 : http_request(urls[flow]).size()) + 4));
    rte_pktmbuf_free(m);
  }
}

}  // namespace
}  // namespace tandem
