// Bubble's local scheduler: a worker that runs each of its NFs as a user-level thread taking one batch of
// at most its batch size per turn, in the order of its segments (the order table).
#pragma once

#include <vector>

#include "contract/shm_layout.h"
#include "dataplane/runtimes/segment.h"

namespace tandem {

// Takes or gives up an NF at a batch boundary: the worker runs NF control `c` only while it holds it. The
// owner takes it once the previous holder has let go, so two workers never run one NF (its rings are
// single-consumer, single-producer). Returns true while `worker` holds it.
bool hold_nf(NfControl& c, int worker);

// Runs `segments` (one NF each) until the manager sets stop. Only NFs whose nf_control.owner is `worker`
// run here, each taking at most its own batch size per turn (`burst` is not used); a worker that owns none
// sleeps on its idle futex until the scheduler hands it one.
void run_ult_loop(std::vector<SegmentRuntime>& segments, StatsZone& stats, int worker, uint16_t burst);

// A worker of user-level threads has an instance of every NF of its core but ran only those it held last.
bool ult_loop_ran(const SegmentRuntime& segment, const StatsZone& stats, int worker);

}  // namespace tandem
