// The order in which NFs sharing a core get it: each chain in chain order, chains interleaved (UNiS's wait
// queues, Bubble's order table).
#pragma once

#include <vector>

#include "contract/deployment.h"

namespace tandem {

// The NFs placed on `core`: each chain's NFs in chain order (so non-consecutive NFs of one chain keep their
// relative order), chains interleaved (first NF of every chain, then the second...). A graph's chain order is
// its topological order (ChainConfig::nfs): every NF comes after all that feed it, so its queue position
// follows the packets' way as a line's does. (UNiS defines lines only; this is the order Tandem chose.)
std::vector<int> chain_order_on_core(const Deployment& deployment, int core);

}  // namespace tandem
