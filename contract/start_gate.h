// The start gate: attached workers sleep on a futex until the manager says `go` (or `stop`), instead of polling.
#pragma once

#include <cstdint>

#include "shm_layout.h"

namespace tandem {

// Worker side: returns once `go` or `stop` is set. Sleeps on `go` (a futex) meanwhile, waking at most every
// `recheck_us` to look at `stop`, which the manager may set in the moment between our check and our sleep.
void wait_at_start_gate(StatsZone& stats, uint32_t recheck_us = 50'000);

// Manager side, after setting `go` or `stop`: wakes every worker waiting at the gate.
void wake_start_gate(StatsZone& stats);

// Worker side, for a worker started in a spare slot beside the running layout (a re-layout's): returns what the
// manager set in `slot.staged` (kStagedGoOn or kStagedDismissed), or kStagedDismissed once `stop` is set. Sleeps on
// the word meanwhile, as at the start gate.
uint32_t wait_while_staged(WorkerControl& slot, StatsZone& stats, uint32_t recheck_us = 50'000);

// Manager side, after setting `slot.staged`: wakes the worker waiting in that slot.
void wake_staged(WorkerControl& slot);

}  // namespace tandem
