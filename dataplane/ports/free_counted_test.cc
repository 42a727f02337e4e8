// Tests of dropping with a journal: every put into the pool happens while the journal and the counter say so.
#include "free_counted.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include <rte_errno.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "contract/packet_meta.h"

namespace tandem {
namespace {

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
rte_mempool_ops witness_ops = {.name = "journal_witness",
                               .alloc = witness_alloc,
                               .free = witness_free,
                               .enqueue = witness_enqueue,
                               .dequeue = witness_dequeue,
                               .get_count = witness_count};
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
