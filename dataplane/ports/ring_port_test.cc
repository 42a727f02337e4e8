// Tests of the ring port: what goes in comes out counted, and a full ring's refusals are dropped and counted.
#include "ring_port.h"

#include <vector>

#include "dataplane/packets/packet_test_support.h"

namespace tandem {
namespace {

TEST(RingPort, EgressTakesEveryPacketAndIngressCountsWhatItTakes) {
  static StatsZone stats{};
  rte_ring* ring = rte_ring_create("port_ring", 8, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
  ASSERT_NE(ring, nullptr);
  uint64_t journal = 0;
  RingEgress egress(ring, stats.rings[0], journal);
  RingIngress ingress(ring, stats.rings[0]);
  EXPECT_EQ(egress.room(), 8u);

  std::vector<rte_mbuf*> frames;
  for (int i = 0; i < 12; i++) frames.push_back(testing::make_frame(i));
  EXPECT_EQ(egress.tx_burst(frames.data(), 12, nullptr), 8);  // the ring holds 8: four are refused, dropped here
  EXPECT_EQ(stats.rings[0].enqueued, 8u);
  EXPECT_EQ(stats.rings[0].dropped_full, 4u);
  EXPECT_EQ(journal, 0u);
  EXPECT_EQ(egress.room(), 0u);
  EXPECT_EQ(ingress.waiting(), 8u);

  rte_mbuf* taken[16];
  EXPECT_EQ(ingress.rx_burst(taken, 5), 5);       // never more than asked
  EXPECT_EQ(ingress.rx_burst(taken + 5, 16), 3);  // never waits for more than there is
  EXPECT_EQ(ingress.rx_burst(taken, 16), 0);
  EXPECT_EQ(stats.rings[0].dequeued, 8u);
  for (int i = 0; i < 8; i++) EXPECT_EQ(taken[i], frames[i]);  // in order, the first eight
  rte_pktmbuf_free_bulk(taken, 8);
  EXPECT_EQ(rte_mempool_in_use_count(testing::test_pool()), 0u);  // the refused four were freed by the port
  rte_ring_free(ring);
}

}  // namespace
}  // namespace tandem
