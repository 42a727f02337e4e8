// Worker hints: everything a scheduler module tells the workers and the generator through the stats zone, in one
// place. How a worker yields, holding and waking it, the budgets and owners of the NFs a user-level-thread worker
// runs, the load window it counts in, and a chain's entry gate. The runtimes and the generator honour them; the
// modules decide when to give them, and never write the zone's control fields themselves.
#pragma once

#include <cstddef>
#include <cstdint>

#include "contract/shm_layout.h"
#include "index_map.h"

namespace tandem {

class WorkerHints {
 public:
  explicit WorkerHints(StatsZone& stats) : stats_(stats) {}
  // The hints of a module that sees part of the run (`map`): its indexes of workers, NFs and chains are its own.
  WorkerHints sliced(IndexMap map) const {
    WorkerHints part(stats_);
    part.map_ = std::move(map);
    return part;
  }

  // How the worker gives its CPU away: after k batches, on an empty input, or by sleeping until woken (the poll loop
  // reads it every turn: a service may switch schedulers while it runs).
  void set_yield_policy(size_t worker, YieldPolicy policy);
  uint64_t yields(size_t worker) const;

  // A held worker sleeps without polling until released (NFVnice's backpressure throttle); release wakes it.
  void hold(size_t worker);
  void release(size_t worker);

  // A worker asleep on an empty input, or a user-level-thread worker without NFs: whether it sleeps; wake it.
  bool asleep(size_t worker) const;
  void wake(size_t worker);

  // The NFs of user-level-thread workers. Before `go`: an NF's first budget and owner, held by no worker yet.
  void place_nf(int nf, uint32_t batch, int owner);
  // The packets the NF may take a turn: its share of the core.
  void set_batch_budget(int nf, uint32_t packets);
  // The worker that should run the NF: a change migrates it, and the new owner is woken to take it.
  void assign(int nf, int worker);
  int owner(int nf) const;

  // While a worker's load window is open, its runtime counts load and poll cycles (Bubble's TSC measurement).
  void set_load_window(size_t worker, bool open);

  // A closed entry drops a chain's new packets at the generator, before any NF spends work on them.
  void set_entry_open(size_t chain, bool open);

  // Every hint back to what a worker does with no module steering it: no yields, no load window, nothing held,
  // every entry open. What one module asked must not outlive it when another takes over.
  void neutral(size_t workers, size_t chains);

 private:
  WorkerControl& worker_control(size_t worker) const {
    return stats_.workers[static_cast<size_t>(map_.worker(static_cast<int>(worker)))];
  }
  NfControl& nf_control(int nf) const { return stats_.nf_control[map_.nf(nf)]; }

  StatsZone& stats_;
  IndexMap map_;
};

}  // namespace tandem
