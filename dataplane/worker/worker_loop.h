// The poll loop of a worker process: dequeue a burst, run the segment's NFs, enqueue, yield as told.
#pragma once

#include <memory>
#include <vector>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "contract/deployment.h"
#include "contract/shm_layout.h"
#include "nfs/nf.h"

namespace tandem {

struct SegmentRuntime {
  rte_ring* in;
  RingCounters* in_counters;
  rte_ring* out;
  RingCounters* out_counters;
  std::vector<int> nf_indexes;
  std::vector<std::unique_ptr<NetworkFunction>> nfs;
  std::vector<double> cost_estimate = {};  // per NF: running cycles per packet of undisturbed batches
};

// Longest a blocked worker sleeps without a wake-up: bounds a lost wake-up and keeps its heartbeat going.
inline constexpr uint32_t kIdleTimeoutUs = 5000;
// NFs of a segment whose service time is accounted (a chain has at most 24 NFs).
inline constexpr size_t kMaxSegmentNfs = 32;

// Polls `segments` until the manager sets stop; `control` is this worker's slot in the stats zone.
void run_worker_loop(std::vector<SegmentRuntime>& segments, StatsZone& stats, WorkerControl& control, uint16_t burst);

// Adds `count` to `dropped_counter` and returns the mbufs to their pool, with `journal` holding `count`
// for the whole of it (contract/shm_layout.h, NfCounters::mbufs_being_freed).
void free_counted(rte_mbuf** mbufs, uint16_t count, uint64_t& dropped_counter, uint64_t& journal);

// Runs one burst through a segment; returns the number of packets dequeued (0 = its input was empty).
uint16_t run_segment_once(SegmentRuntime& segment, StatsZone& stats, uint16_t burst);

}  // namespace tandem
