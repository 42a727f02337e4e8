// Tests of one worker burst: counters, hop stamps, NF drops and drops at a full output ring all add up.
#include "worker_loop.h"

#include <rte_errno.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "nfs/nf_test_support.h"

namespace tandem {
namespace {

TEST(WorkerLoop, SegmentBurstCountsEveryPacket) {
  static StatsZone stats{};
  rte_ring* in = rte_ring_create("wl_in", 64, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
  rte_ring* out = rte_ring_create("wl_out", 8, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
  ASSERT_NE(in, nullptr);
  ASSERT_NE(out, nullptr);
  SegmentRuntime segment{in, &stats.rings[0], out, &stats.rings[1], {3, 7}, {}};
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

// A pool whose puts record what the free journal and the drop counter said at that moment: mempool ops
// backed by an rte_ring, with the observation in enqueue (a pool without a cache puts straight into them).
struct JournalWitness {
  const uint64_t* journal = nullptr;
  const uint64_t* counter = nullptr;
  std::vector<std::pair<uint64_t, uint64_t>> seen;  // (journal, counter) at each put
} witness;

int witness_alloc(rte_mempool* mp) {
  mp->pool_data = rte_ring_create("witness_ring", rte_align32pow2(mp->size + 1), SOCKET_ID_ANY, RING_F_EXACT_SZ);
  return mp->pool_data ? 0 : -rte_errno;
}
void witness_free(rte_mempool* mp) { rte_ring_free(static_cast<rte_ring*>(mp->pool_data)); }
int witness_enqueue(rte_mempool* mp, void* const* objects, unsigned n) {
  if (witness.journal) witness.seen.emplace_back(*witness.journal, *witness.counter);
  return rte_ring_enqueue_bulk(static_cast<rte_ring*>(mp->pool_data), objects, n, nullptr) == n ? 0 : -ENOBUFS;
}
int witness_dequeue(rte_mempool* mp, void** objects, unsigned n) {
  return rte_ring_dequeue_bulk(static_cast<rte_ring*>(mp->pool_data), objects, n, nullptr) == n ? 0 : -ENOENT;
}
unsigned witness_count(const rte_mempool* mp) { return rte_ring_count(static_cast<rte_ring*>(mp->pool_data)); }
rte_mempool_ops witness_ops = {.name = "journal_witness", .alloc = witness_alloc, .free = witness_free,
                               .enqueue = witness_enqueue, .dequeue = witness_dequeue, .get_count = witness_count};
RTE_MEMPOOL_REGISTER_OPS(witness_ops);

TEST(WorkerLoop, FreeOfDroppedMbufsIsJournalledFromBeforeTheCountUntilThePoolHasThem) {
  rte_mempool* pool = rte_pktmbuf_pool_create_by_ops("witness_pool", 63, 0, kMbufPrivSize, RTE_MBUF_DEFAULT_BUF_SIZE,
                                                     SOCKET_ID_ANY, "journal_witness");
  ASSERT_NE(pool, nullptr);
  rte_mbuf* mbufs[5];
  ASSERT_EQ(rte_pktmbuf_alloc_bulk(pool, mbufs, 5), 0);
  uint64_t journal = 0, dropped = 7;
  witness = {&journal, &dropped, {}};
  free_counted(mbufs, 5, dropped, journal);
  // Every put into the pool happened while the journal said 5 and the counter already had them: a process
  // killed at any of those moments leaves a journal that says how many mbufs may be on either side.
  ASSERT_FALSE(witness.seen.empty());
  for (auto [journal_then, counter_then] : witness.seen) {
    EXPECT_EQ(journal_then, 5u);
    EXPECT_EQ(counter_then, 12u);
  }
  EXPECT_EQ(journal, 0u);
  EXPECT_EQ(dropped, 12u);
  EXPECT_EQ(rte_mempool_in_use_count(pool), 0u);
  witness = {};
  rte_mempool_free(pool);
}

}  // namespace
}  // namespace tandem
