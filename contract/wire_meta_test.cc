// Tests of the packet record's trailer: what goes out on a kernel link comes back as it was, and a frame that
// carries no record is told apart.
#include "wire_meta.h"

#include <cstring>

#include "dataplane/packets/packet_test_support.h"

namespace tandem {
namespace {

TEST(WireMeta, RecordSurvivesTheTripAndTheFrameIsUnchanged) {
  rte_mbuf* m = testing::make_frame(3, 64);
  std::vector<uint8_t> frame(rte_pktmbuf_mtod(m, uint8_t*), rte_pktmbuf_mtod(m, uint8_t*) + rte_pktmbuf_data_len(m));
  PacketMeta* meta = meta_of(m);
  meta->seq = 123456789012ull;
  meta->tx_tsc = 987654321ull;
  meta->chain = 7;
  meta->trace_slot = 42;
  stamp_hop(m, 5);
  stamp_hop(m, 9);
  ASSERT_TRUE(append_wire_meta(m));
  EXPECT_EQ(rte_pktmbuf_data_len(m), frame.size() + wire_meta_bytes(2));

  memset(meta, 0xff, sizeof(PacketMeta));  // the next process's private area holds anything
  ASSERT_TRUE(take_wire_meta(m));
  EXPECT_EQ(meta->seq, 123456789012ull);
  EXPECT_EQ(meta->tx_tsc, 987654321ull);
  EXPECT_EQ(meta->chain, 7);
  EXPECT_EQ(meta->trace_slot, 42u);
  ASSERT_EQ(meta->hop_count, 2);
  EXPECT_EQ(meta->hops[0], 5);
  EXPECT_EQ(meta->hops[1], 9);
  EXPECT_EQ(meta->branch_hops[0] | meta->branch_hops[1], 0u);
  ASSERT_EQ(rte_pktmbuf_data_len(m), frame.size());
  EXPECT_EQ(rte_pktmbuf_pkt_len(m), frame.size());
  EXPECT_EQ(memcmp(rte_pktmbuf_mtod(m, uint8_t*), frame.data(), frame.size()), 0);
  rte_pktmbuf_free(m);
}

TEST(WireMeta, AFrameWithoutARecordIsRefusedAndLeftAlone) {
  rte_mbuf* m = testing::make_frame(0, 64);
  uint16_t length = rte_pktmbuf_data_len(m);
  EXPECT_FALSE(take_wire_meta(m));  // the frame's last bytes are not the magic
  EXPECT_EQ(rte_pktmbuf_data_len(m), length);
  m->data_len = m->pkt_len = 10;  // shorter than any record
  EXPECT_FALSE(take_wire_meta(m));
  rte_pktmbuf_free(m);
}

TEST(WireMeta, AClaimedHopCountLongerThanTheFrameIsRefused) {
  rte_mbuf* m = testing::make_frame(0, 64);
  ASSERT_TRUE(append_wire_meta(m));
  uint8_t* end = rte_pktmbuf_mtod(m, uint8_t*) + rte_pktmbuf_data_len(m);
  end[-3] = 200;  // more hops than a record has (and than the frame holds)
  EXPECT_FALSE(take_wire_meta(m));
  rte_pktmbuf_free(m);
}

}  // namespace
}  // namespace tandem
