// The sink: drains each chain's exit ports, verifies every packet's hop record, counts it and samples latency; then
// frees it, or, for a chain that sends its output to a port, hands it to that port (its Tx stage).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <rte_ring.h>

#include "chain_paths.h"
#include "contract/deployment.h"
#include "contract/hop_trace.h"
#include "contract/latency.h"
#include "contract/latency_histogram.h"
#include "contract/shm_layout.h"
#include "dataplane/ports/ethdev/ethdev_port.h"
#include "dataplane/ports/port.h"
#include "flow_order.h"
#include "latency_breakdown.h"
#include "pcap_capture.h"

namespace tandem {

struct ChainDelivery {
  uint64_t delivered = 0;
  uint64_t delivered_bytes = 0;
  uint64_t hop_errors = 0;  // packets whose hop record is not a path of their chain's graph (chain_paths.h)
  // A chain with a scaled NF: packets delivered after a later packet of their flow (flow_order.h); else unchecked.
  std::optional<uint64_t> flow_reorders;
};

class Sink {
 public:
  // `exits[c]` is chain c's exit port (chain_ends.h); `to_ports[c]`, the port chain c's output leaves by (null, or
  // none given: freed here).
  Sink(const Deployment& deployment, std::vector<std::unique_ptr<IngressPort>> exits,
       std::vector<EthdevPort*> to_ports = {});
  // A chain added to a running service (its index is the next one): its exit drained from now on.
  // `to_port`: the port its output leaves by (null: freed here).
  void add_chain(const ChainConfig& chain, std::unique_ptr<IngressPort> exit, EthdevPort* to_port);
  // A removed chain's exit, drained: taken from no more (a kernel chain's DPDK port closes after).
  void close_exit(int chain) { exits_.at(static_cast<size_t>(chain)).reset(); }
  // A port removed from a running service: a removed chain's straggler that would leave by it is freed here.
  void stop_port(EthdevPort* port) {
    std::replace(to_ports_.begin(), to_ports_.end(), port, static_cast<EthdevPort*>(nullptr));
  }
  // Takes what the chains' exits hold now; returns how many packets it took. A burst's packets are timed by a clock
  // read once it is taken: a packet that crossed its chain since the caller's loop began (a port's frame is received
  // and stamped in the same turn) must not arrive before it was sent.
  uint64_t poll();
  // Latency is sampled only while measuring (warm-up and drain are excluded).
  void set_measuring(bool measuring) { measuring_ = measuring; }
  const ChainDelivery& delivery(int chain) const { return delivery_[chain]; }
  LatencySamples& latency(int chain) { return latency_[chain]; }
  // Every sampled packet's latency since the start, warm-up included: live metrics.
  const LatencyHistogram& latency_histogram(int chain) const { return histograms_[chain]; }
  // run --profile: traced packets' hops, added up per chain while measuring.
  void trace_from(TraceSlot* zone) { traces_ = zone; }
  bool tracing() const { return traces_ != nullptr; }
  const LatencyBreakdown& breakdown(int chain) const { return breakdowns_[chain]; }
  // The highest latency (TSC cycles) of a sampled packet since the last call, then 0 again: what a live change's
  // watch reads every millisecond (dataplane/run/change_watch.h).
  uint64_t take_recent_max_latency() { return std::exchange(recent_max_latency_, 0); }
  // Packets written to the capture file (run --capture); 0 without one.
  uint64_t captured() const { return capture_ ? capture_->written() : 0; }

 private:
  void follow_chain(const ChainConfig& chain);

  const Deployment& deployment_;
  std::vector<std::unique_ptr<IngressPort>> exits_;
  std::vector<EthdevPort*> to_ports_;  // by chain
  std::vector<ChainPaths> paths_;      // per chain
  std::vector<ChainDelivery> delivery_;
  std::vector<std::optional<FlowOrder>> flow_order_;  // per chain with a scaled NF
  std::vector<LatencySamples> latency_;
  std::vector<LatencyHistogram> histograms_;
  TraceSlot* traces_ = nullptr;
  std::vector<LatencyBreakdown> breakdowns_;
  bool measuring_ = false;
  uint64_t recent_max_latency_ = 0;
  std::unique_ptr<PcapCapture> capture_;  // run --capture: delivered packets to a pcap file
};

}  // namespace tandem
