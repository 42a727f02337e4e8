// A segment of a chain as a runtime holds it (ports in and out, the NF instances between) and one burst through it.
#pragma once

#include <memory>
#include <vector>

#include "busy_history.h"
#include "contract/shm_layout.h"
#include "dataplane/ports/port.h"
#include "live_args.h"
#include "nfs/nf.h"

namespace tandem {

struct SegmentRuntime {
  std::unique_ptr<IngressPort> in;
  std::unique_ptr<EgressPort> out;
  std::vector<int> nf_indexes;
  std::vector<std::unique_ptr<NetworkFunction>> nfs;
  std::vector<double> cost_estimate = {};    // per NF: running cycles per packet of undisturbed batches
  std::vector<bool> in_branch = {};          // per NF: runs in a parallel branch (stamps the branch hop set)
  std::vector<uint8_t> hops = {};            // per NF: its stamp (NfConfig::hop); its index where not given
  uint16_t prefetch_distance = 0;            // pipelined prefetching for every NF's batch (contract/batch.h)
  TraceSlot* traces = nullptr;               // run --profile: traced packets get per-hop timestamps (hop_tracing.h)
  BusyHistory input_history = {};            // with traces: the first NF's batches, what its input ring waited on
  std::shared_ptr<LiveArgs> live = nullptr;  // in a worker: how its NFs take new arguments while they run
};

// NFs of a segment whose service time is accounted: a chain has at most kMaxHops (64) NFs.
inline constexpr size_t kMaxSegmentNfs = 64;

// Runs one burst of at most `burst` packets through a segment; returns the number taken in (0 = its input
// was empty). Counts each NF's packets, drops and cycles into `stats`.
uint16_t run_segment_once(SegmentRuntime& segment, StatsZone& stats, uint16_t burst);

}  // namespace tandem
