// Tests of one burst through a segment: counters, hop stamps, NF drops and drops at a full output ring all add up.
#include "segment.h"

#include <rte_ring.h>

#include "dataplane/ports/ring_port.h"
#include "nfs/nf_test_support.h"

namespace tandem {
namespace {

TEST(WorkerLoop, SegmentBurstCountsEveryPacket) {
  static StatsZone stats{};
  rte_ring* in = rte_ring_create("wl_in", 64, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
  rte_ring* out = rte_ring_create("wl_out", 8, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
  ASSERT_NE(in, nullptr);
  ASSERT_NE(out, nullptr);
  SegmentRuntime segment{std::make_unique<RingIngress>(in, stats.rings[0]),
                         std::make_unique<RingEgress>(out, stats.rings[1], stats.nfs[3].mbufs_being_freed), {3, 7}, {}};
  segment.nfs.push_back(testing::make_nf("ttl"));
  segment.nfs.push_back(testing::make_nf("macswap"));

  std::vector<rte_mbuf*> frames;
  for (int i = 0; i < 32; i++) frames.push_back(testing::make_frame(i));
  for (int i = 0; i < 4; i++) rte_pktmbuf_mtod_offset(frames[i], rte_ipv4_hdr*, 14)->time_to_live = 1;  // ttl drops 4
  ASSERT_EQ(rte_ring_enqueue_burst(in, reinterpret_cast<void**>(frames.data()), 32, nullptr), 32u);

  EXPECT_EQ(run_segment_once(segment, stats, 32), 32);
  EXPECT_EQ(stats.rings[0].dequeued, 32u);
  EXPECT_EQ(stats.nfs[3].packets_in, 32u);
  EXPECT_EQ(stats.nfs[3].packets_dropped, 4u);
  EXPECT_EQ(stats.nfs[7].packets_in, 28u);
  EXPECT_EQ(stats.nfs[7].packets_out, 28u);
  EXPECT_EQ(stats.rings[1].enqueued, 8u);  // the output ring holds 8
  EXPECT_EQ(stats.rings[1].dropped_full, 20u);
  EXPECT_EQ(stats.nfs[3].mbufs_being_freed, 0u);  // the journal is clear once the frees are done
  EXPECT_EQ(run_segment_once(segment, stats, 32), 0);
  EXPECT_EQ(stats.nfs[3].empty_polls, 1u);

  rte_mbuf* delivered[8];
  ASSERT_EQ(rte_ring_dequeue_burst(out, reinterpret_cast<void**>(delivered), 8, nullptr), 8u);
  for (rte_mbuf* m : delivered) {
    ASSERT_EQ(meta_of(m)->hop_count, 2);
    EXPECT_EQ(meta_of(m)->hops[0], 3);
    EXPECT_EQ(meta_of(m)->hops[1], 7);
    rte_pktmbuf_free(m);
  }
  // Every mbuf taken from the pool is back: dropped ones were freed by the runtime.
  EXPECT_EQ(rte_mempool_in_use_count(testing::test_pool()), 0u);
  rte_ring_free(in);
  rte_ring_free(out);
}

}  // namespace
}  // namespace tandem
