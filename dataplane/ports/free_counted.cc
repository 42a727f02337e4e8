// Dropping mbufs with exact accounting even when the process is killed in the middle of it.
#include "free_counted.h"

#include "contract/shm_layout.h"

namespace tandem {

void free_counted(rte_mbuf** mbufs, uint16_t count, uint64_t& dropped_counter, uint64_t& journal) {
  // A kill can land anywhere, and no order of "count" and "free" is atomic: counting first leaves freed-to-be
  // mbufs outside the pool, freeing first leaves freed mbufs counted as held. The journal marks the window,
  // so a worker that died inside it is told apart from a leak. The release fence keeps the pool's writes
  // after the journal's store; the release store keeps them before its clear.
  __atomic_store_n(&journal, uint64_t{count}, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  counter_add(dropped_counter, uint64_t{count});
  rte_pktmbuf_free_bulk(mbufs, count);
  __atomic_store_n(&journal, uint64_t{0}, __ATOMIC_RELEASE);
}

}  // namespace tandem
