// Where a scheduler module sees part of a run (one core's NFs, schedulers/per_core/): the run's index of each NF,
// ring, chain and worker at the module's own index, so that what it reads and the hints it gives reach the run's.
#pragma once

#include <algorithm>
#include <vector>

namespace tandem {

struct IndexMap {
  bool whole = true;  // the module sees the whole run: every index is the run's
  std::vector<int> nfs, rings, chains, workers;

  int nf(int local) const { return whole ? local : nfs[static_cast<size_t>(local)]; }
  int ring(int local) const { return whole ? local : rings[static_cast<size_t>(local)]; }
  int chain(int local) const { return whole ? local : chains[static_cast<size_t>(local)]; }
  int worker(int local) const { return whole ? local : workers[static_cast<size_t>(local)]; }
  // The module's index of one of the run's workers; -1 where the module does not see it.
  int local_worker(int run_worker) const {
    if (whole || run_worker < 0) return run_worker;
    auto found = std::find(workers.begin(), workers.end(), run_worker);
    return found == workers.end() ? -1 : static_cast<int>(found - workers.begin());
  }
};

}  // namespace tandem
