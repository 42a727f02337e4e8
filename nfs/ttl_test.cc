// Tests of the ttl NF: TTL decrement, incremental checksum against a full recomputation, drop at zero.
#include "nfs/ttl.h"

#include "nf_test_support.h"

namespace tandem {
namespace {

rte_ipv4_hdr* ip_of(rte_mbuf* m) { return rte_pktmbuf_mtod_offset(m, rte_ipv4_hdr*, sizeof(rte_ether_hdr)); }

// RFC 1071's worked header (total length 0x0073, TTL 0x40, UDP, 192.168.0.1 -> 192.168.0.199): checksum 0xb861.
TEST(Ttl, KnownVectorChecksumAfterDecrement) {
  uint8_t header[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                        0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(header);
  ASSERT_EQ(rte_raw_cksum(ip, sizeof(*ip)), 0xffff);  // sanity: the vector's checksum is right
  ASSERT_TRUE(decrement_ttl(ip));
  EXPECT_EQ(ip->time_to_live, 0x3f);
  // TTL 0x40 -> 0x3f lowers the 0x4011 word by 0x0100, so the checksum rises by 0x0100: 0xb961.
  EXPECT_EQ(rte_be_to_cpu_16(ip->hdr_checksum), 0xb961);
  EXPECT_EQ(rte_raw_cksum(ip, sizeof(*ip)), 0xffff);
}

TEST(Ttl, IncrementalUpdateMatchesRecomputationForEveryTtl) {
  rte_mbuf* m = testing::make_frame(7);
  rte_ipv4_hdr* ip = ip_of(m);
  for (int ttl = 255; ttl >= 2; ttl--) {
    ip->time_to_live = static_cast<uint8_t>(ttl);
    ip->hdr_checksum = 0;
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    ASSERT_TRUE(decrement_ttl(ip));
    uint16_t incremental = ip->hdr_checksum;
    ip->hdr_checksum = 0;
    ASSERT_EQ(incremental, rte_ipv4_cksum(ip)) << "ttl " << ttl;
  }
  rte_pktmbuf_free(m);
}

TEST(Ttl, DropsWhenTtlWouldReachZero) {
  auto nf = testing::make_nf("ttl");
  rte_mbuf* alive = testing::make_frame(1);
  rte_mbuf* dying = testing::make_frame(2);
  ip_of(dying)->time_to_live = 1;
  auto out = testing::run_batch(*nf, {alive, dying});
  ASSERT_EQ(out.kept.size(), 1u);
  EXPECT_EQ(out.kept[0], alive);
  EXPECT_EQ(out.dropped, 1);
  EXPECT_EQ(ip_of(alive)->time_to_live, 63);
  testing::free_all(out.kept);
}

}  // namespace
}  // namespace tandem
