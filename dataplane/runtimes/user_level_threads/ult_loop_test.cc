// Tests of the user-level-thread worker: NF handoff between workers, batch sizes, and a full worker run.
#include "ult_loop.h"

#include <rte_ring.h>

#include <thread>

#include "dataplane/ports/ring_port.h"
#include "nfs/nf_test_support.h"

namespace tandem {
namespace {

TEST(HoldNf, TheOwnerTakesAFreeNf) {
  NfControl c{.batch_size = 32, .owner = 2, .running_on = -1};
  EXPECT_FALSE(hold_nf(c, 1));
  EXPECT_TRUE(hold_nf(c, 2));
  EXPECT_EQ(c.running_on, 2);
}

TEST(HoldNf, AMigratedNfMovesOnlyOnceTheOldHolderLetsGo) {
  NfControl c{.batch_size = 32, .owner = 1, .running_on = 1};
  c.owner = 2;                  // the scheduler migrates it
  EXPECT_FALSE(hold_nf(c, 2));  // worker 1 may still be inside a batch
  EXPECT_EQ(c.running_on, 1);
  EXPECT_FALSE(hold_nf(c, 1));  // worker 1, at its next batch boundary, lets go
  EXPECT_EQ(c.running_on, -1);
  EXPECT_TRUE(hold_nf(c, 2));
  EXPECT_EQ(c.running_on, 2);
}

// Two NFs of a chain as user-level threads of one worker: every packet crosses both in order, and the
// first NF takes at most its batch size per turn.
TEST(UltWorkerLoop, RunsAChainWithBatchSizes) {
  static StatsZone stats{};
  rte_ring* rings[3];
  for (int r = 0; r < 3; r++) {
    rings[r] = rte_ring_create(("ult" + std::to_string(r)).c_str(), 512, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    ASSERT_NE(rings[r], nullptr);
  }
  std::vector<SegmentRuntime> segments;
  for (int k = 0; k < 2; k++) {
    SegmentRuntime segment{
        std::make_unique<RingIngress>(rings[k], stats.rings[k]),
        std::make_unique<RingEgress>(rings[k + 1], stats.rings[k + 1], stats.nfs[k].mbufs_being_freed),
        {k},
        {}};
    segment.nfs.push_back(testing::make_nf("macswap"));
    segments.push_back(std::move(segment));
    stats.nf_control[k] = {.batch_size = 16, .owner = 0, .running_on = -1};
  }
  stats.nf_control[1].batch_size = 64;
  std::vector<rte_mbuf*> frames;
  for (int i = 0; i < 100; i++) frames.push_back(testing::make_frame(i));
  ASSERT_EQ(rte_ring_enqueue_burst(rings[0], reinterpret_cast<void**>(frames.data()), 100, nullptr), 100u);

  std::thread worker([&] { run_ult_loop(segments, stats, 0, 32); });
  while (rte_ring_count(rings[2]) < 100) std::this_thread::yield();
  flag_store(stats.stop, 1u);
  worker.join();

  EXPECT_EQ(stats.nfs[0].packets_in, 100u);
  EXPECT_EQ(stats.nfs[1].packets_in, 100u);
  EXPECT_GE(stats.nfs[0].batches, 7u);  // 100 packets, at most 16 a turn
  rte_mbuf* delivered[100];
  ASSERT_EQ(rte_ring_dequeue_burst(rings[2], reinterpret_cast<void**>(delivered), 100, nullptr), 100u);
  for (rte_mbuf* m : delivered) {
    ASSERT_EQ(meta_of(m)->hop_count, 2);
    EXPECT_EQ(meta_of(m)->hops[0], 0);
    EXPECT_EQ(meta_of(m)->hops[1], 1);
    rte_pktmbuf_free(m);
  }
  EXPECT_EQ(stats.nf_control[0].running_on, 0);
  for (rte_ring* ring : rings) rte_ring_free(ring);
}

}  // namespace
}  // namespace tandem
