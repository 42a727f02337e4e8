// Tests of the checkip NF on good and corrupt IPv4 headers.
#include "nfs/checkip.h"

#include "nf_test_support.h"

namespace tandem {
namespace {

rte_ipv4_hdr* ip_of(rte_mbuf* m) { return rte_pktmbuf_mtod_offset(m, rte_ipv4_hdr*, sizeof(rte_ether_hdr)); }

TEST(CheckIp, AcceptsGeneratedHeaders) {
  for (uint16_t size : {64, 200, 1400, 1518}) {
    rte_mbuf* m = testing::make_frame(3, size);
    EXPECT_TRUE(ipv4_header_valid(ip_of(m), size - 4 - 14)) << size;
    rte_pktmbuf_free(m);
  }
}

TEST(CheckIp, RejectsEachKindOfCorruption) {
  struct Case {
    const char* what;
    void (*corrupt)(rte_ipv4_hdr*);
  } cases[] = {
      {"flipped checksum bit", [](rte_ipv4_hdr* ip) { ip->hdr_checksum ^= 0x0100; }},
      {"flipped address bit", [](rte_ipv4_hdr* ip) { ip->src_addr ^= 0x01; }},
      {"version 6", [](rte_ipv4_hdr* ip) { ip->version_ihl = 0x65; }},
      {"IHL 4", [](rte_ipv4_hdr* ip) { ip->version_ihl = 0x44; }},
      {"total length beyond frame", [](rte_ipv4_hdr* ip) { ip->total_length = rte_cpu_to_be_16(1500); }},
  };
  auto nf = testing::make_nf("checkip");
  for (const Case& c : cases) {
    rte_mbuf* m = testing::make_frame(1);
    c.corrupt(ip_of(m));
    auto out = testing::run_batch(*nf, {m});
    EXPECT_EQ(out.dropped, 1) << c.what;
    testing::free_all(out.kept);
  }
}

TEST(CheckIp, KeepsGoodPacketsInOrder) {
  auto nf = testing::make_nf("checkip");
  rte_mbuf* a = testing::make_frame(1);
  rte_mbuf* bad = testing::make_frame(2);
  rte_mbuf* b = testing::make_frame(3);
  ip_of(bad)->hdr_checksum ^= 0xffff;
  auto out = testing::run_batch(*nf, {a, bad, b});
  ASSERT_EQ(out.kept.size(), 2u);
  EXPECT_EQ(out.kept[0], a);
  EXPECT_EQ(out.kept[1], b);
  testing::free_all(out.kept);
}

}  // namespace
}  // namespace tandem
