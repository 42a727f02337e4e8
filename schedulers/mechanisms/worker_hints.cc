// Worker hints written into the stats zone, with the memory order each needs and the wake-ups that go with them.
#include "worker_hints.h"

#include "contract/idle_wait.h"

namespace tandem {

void WorkerHints::set_yield_policy(size_t worker, YieldPolicy policy) {
  YieldPolicy& to = worker_control(worker).yield;
  flag_store(to.after_batches, policy.after_batches);
  flag_store(to.on_empty, policy.on_empty);
  flag_store(to.block_on_empty, policy.block_on_empty);
}

uint64_t WorkerHints::yields(size_t worker) const { return counter_read(worker_control(worker).yields); }

void WorkerHints::hold(size_t worker) { flag_store(worker_control(worker).throttled, 1u); }

void WorkerHints::release(size_t worker) {
  WorkerControl& control = worker_control(worker);
  flag_store(control.throttled, 0u);
  idle_wake(control);
}

bool WorkerHints::asleep(size_t worker) const { return idle_sleeping(worker_control(worker)); }

void WorkerHints::wake(size_t worker) { idle_wake(worker_control(worker)); }

void WorkerHints::place_nf(int nf, uint32_t batch, int owner) {
  NfControl& control = nf_control(nf);
  flag_store(control.batch_size, batch);
  flag_store(control.running_on, int32_t{-1});
  flag_store(control.owner, static_cast<int32_t>(owner < 0 ? owner : map_.worker(owner)));
}

void WorkerHints::set_batch_budget(int nf, uint32_t packets) { flag_store(nf_control(nf).batch_size, packets); }

void WorkerHints::assign(int nf, int worker) {
  flag_store(nf_control(nf).owner, static_cast<int32_t>(map_.worker(worker)));
  idle_wake(worker_control(static_cast<size_t>(worker)));
}

int WorkerHints::owner(int nf) const { return map_.local_worker(flag_load(nf_control(nf).owner)); }

void WorkerHints::set_load_window(size_t worker, bool open) {
  flag_store(worker_control(worker).load_window, open ? 1u : 0u);
}

void WorkerHints::set_entry_open(size_t chain, bool open) {
  flag_store(stats_.chains[map_.chain(static_cast<int>(chain))].entry_closed, open ? 0u : 1u);
}

void WorkerHints::neutral(size_t workers, size_t chains) {
  for (size_t w = 0; w < workers; w++) {
    set_yield_policy(w, YieldPolicy{});
    set_load_window(w, false);
    release(w);
  }
  for (size_t c = 0; c < chains; c++) set_entry_open(c, true);
}

}  // namespace tandem
