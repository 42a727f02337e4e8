// One burst through a segment: rx from its ingress port, each NF in turn, tx to its egress port, every counter on the
// way.
#include "segment.h"

#include <algorithm>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "contract/packet_meta.h"
#include "dataplane/ports/free_counted.h"
#include "hop_tracing.h"

namespace tandem {

// A batch during which the kernel descheduled the process also counts the other processes' time (a CFS
// slice is milliseconds, a batch microseconds). Batches above kPreemptedFactor x the running per-packet
// estimate are left out of the service time; the estimate moves by clipped steps, so a real change of
// cost (bigger packets) is followed within a few dozen batches.
constexpr double kPreemptedFactor = 4.0;

void account_service_time(SegmentRuntime& segment, size_t k, NfCounters& counters, uint64_t spent, uint16_t packets) {
  if (segment.cost_estimate.size() < segment.nfs.size()) segment.cost_estimate.resize(segment.nfs.size(), 0.0);
  double& estimate = segment.cost_estimate[k];
  double per_packet = static_cast<double>(spent) / packets;
  if (estimate == 0 || per_packet <= kPreemptedFactor * estimate) {
    counter_add(counters.service_cycles, spent);
    counter_add(counters.service_packets, static_cast<uint64_t>(packets));
  }
  estimate =
      estimate == 0 ? per_packet : estimate + (std::min(per_packet, kPreemptedFactor * estimate) - estimate) / 16;
}

// What a batch of NF k cost in work: `spent`, unless that exceeds kPreemptedFactor x its usual cost (the estimate
// before this batch), when the kernel took the rest and the batch counts that much.
static uint64_t work_of(const SegmentRuntime& segment, size_t k, uint64_t spent, uint16_t packets) {
  double usual = k < segment.cost_estimate.size() ? segment.cost_estimate[k] * packets : 0.0;
  return usual > 0 ? std::min<uint64_t>(spent, static_cast<uint64_t>(kPreemptedFactor * usual)) : spent;
}

uint16_t run_segment_once(SegmentRuntime& segment, StatsZone& stats, uint16_t burst) {
  rte_mbuf* pkts[kMaxBurst];
  rte_mbuf* dropped[kMaxBurst];
  uint8_t gates[kMaxBurst];
  // Between two batches, the only place where no packet is inside an NF: new arguments are swapped in here.
  if (live_args_due(segment.live.get(), stats, segment.nf_indexes.front())) apply_live_args(segment, stats);
  uint64_t begin = rte_rdtsc();
  uint16_t n = segment.in->rx_burst(pkts, burst);
  if (n == 0) {
    counter_add(stats.nfs[segment.nf_indexes.front()].empty_polls, uint64_t{1});
    segment.out->flush();
    return 0;
  }
  Batch batch{pkts, n, dropped, 0, gates, segment.prefetch_distance};
  uint64_t& journal = stats.nfs[segment.nf_indexes.front()].mbufs_being_freed;
  uint64_t spent_by_nf[kMaxSegmentNfs] = {}, inside_nfs = 0;
  TracedPackets traced;  // run --profile: this NF's traced packets
  uint16_t in_by_nf[kMaxSegmentNfs] = {};
  for (size_t k = 0; k < segment.nfs.size() && batch.count > 0; k++) {
    NfCounters& counters = stats.nfs[segment.nf_indexes[k]];
    auto hop = k < segment.hops.size() ? segment.hops[k] : static_cast<uint8_t>(segment.nf_indexes[k]);
    bool branch = k < segment.in_branch.size() && segment.in_branch[k];
    if (branch)  // siblings stamp the same packet at the same time
      for (uint16_t i = 0; i < batch.count; i++) stamp_branch_hop(batch.pkts[i], hop);
    else if (!segment.traces)
      for (uint16_t i = 0; i < batch.count; i++) stamp_hop(batch.pkts[i], hop);
    if (segment.traces)  // in the stamping pass: the meta's cache line is in hand
      for (uint16_t i = 0; i < batch.count; i++) {
        if (!branch) stamp_hop(batch.pkts[i], hop);
        traced.note(batch.pkts[i]);
      }
    uint16_t in = batch.count;
    batch.clear_gates();  // the gates the egress routes by are the segment's last NF's
    uint64_t start = rte_rdtsc();
    if (traced.count && branch) trace_branch(segment.traces, traced);
    // The first NF's packets waited in its input ring until its poll that took them began (no clock read of its
    // own: the batch's first serves); the others' came straight on from the NF before.
    if (traced.count && !branch)
      trace_batch_start(segment.traces, traced, hop, k == 0 ? begin : start, start,
                        k == 0 ? &segment.input_history : nullptr);
    batch.prefetch_first();  // each NF's, as in μNF: an NF may run in a process of its own
    segment.nfs[k]->process(batch);
    uint64_t spent = rte_rdtsc() - start;
    uint64_t work = work_of(segment, k, spent, in);
    if (segment.traces) {
      if (traced.count && !branch) trace_batch_end(segment.traces, traced, hop, start + spent);
      traced.count = 0;
      // Work, not wall time: the rest of a preempted batch the NF was not running, and a packet queued then
      // waited for that.
      if (k == 0) segment.input_history.record(start + spent, work);
    }
    counter_add(counters.packets_in, static_cast<uint64_t>(in));
    counter_add(counters.packets_out, static_cast<uint64_t>(batch.count));
    counter_add(counters.batches, uint64_t{1});
    counter_add(counters.busy_cycles, spent);
    counter_add(counters.work_cycles, work);
    if (k < kMaxSegmentNfs) {
      spent_by_nf[k] = spent;
      in_by_nf[k] = in;
    }
    inside_nfs += spent;
    if (batch.dropped_count > 0) {
      free_counted(batch.dropped, batch.dropped_count, counters.packets_dropped, journal);
      batch.dropped_count = 0;
    }
  }
  if (batch.count > 0) segment.out->tx_burst(batch.pkts, batch.count, batch.gates);
  // The service time includes the runtime's ring I/O for the batch (what NFVnice's libnf sees), charged to
  // the segment's first NF, which did the dequeue.
  uint64_t ring_io = rte_rdtsc() - begin - inside_nfs;
  for (size_t k = 0; k < segment.nfs.size() && k < kMaxSegmentNfs && in_by_nf[k] > 0; k++)
    account_service_time(segment, k, stats.nfs[segment.nf_indexes[k]], spent_by_nf[k] + (k == 0 ? ring_io : 0),
                         in_by_nf[k]);
  return static_cast<uint16_t>(n);
}

}  // namespace tandem
