// The poll loop of a worker process: take a burst from the ingress port, run the segment's NFs, hand it to the egress port, yield as told.
#pragma once

#include <memory>
#include <vector>


#include "contract/deployment.h"
#include "contract/shm_layout.h"
#include "dataplane/ports/port.h"
#include "nfs/nf.h"

namespace tandem {

struct SegmentRuntime {
  std::unique_ptr<IngressPort> in;
  std::unique_ptr<EgressPort> out;
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

// Runs one burst through a segment; returns the number of packets dequeued (0 = its input was empty).
uint16_t run_segment_once(SegmentRuntime& segment, StatsZone& stats, uint16_t burst);

}  // namespace tandem
