// Dropping mbufs with exact accounting: the drop is counted, the mbufs freed, and the window between journalled.
#pragma once

#include <cstdint>

#include <rte_mbuf.h>

namespace tandem {

// Adds `count` to `dropped_counter` and returns the mbufs to their pool, with `journal` holding `count` for the
// whole of it (contract/shm_layout.h, NfCounters::mbufs_being_freed).
void free_counted(rte_mbuf** mbufs, uint16_t count, uint64_t& dropped_counter, uint64_t& journal);

}  // namespace tandem
