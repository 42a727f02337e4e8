// Packet sink: delivery counts, hop-path verification and latency sampling.
#include "sink.h"

#include <algorithm>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "contract/batch.h"
#include "contract/packet_meta.h"
#include "nfs/nf.h"

namespace tandem {

Sink::Sink(const Deployment& deployment, std::vector<std::unique_ptr<IngressPort>> exits,
           std::vector<EthdevPort*> to_ports)
    : deployment_(deployment), exits_(std::move(exits)), to_ports_(std::move(to_ports)) {
  to_ports_.resize(deployment.chains.size(), nullptr);
  for (const ChainConfig& chain : deployment.chains) follow_chain(chain);
  if (!deployment.capture_path.empty())
    capture_ = std::make_unique<PcapCapture>(deployment.capture_path, deployment.capture_limit,
                                             static_cast<double>(rte_get_tsc_hz()));
}

void Sink::add_chain(const ChainConfig& chain, std::unique_ptr<IngressPort> exit, EthdevPort* to_port) {
  exits_.push_back(std::move(exit));
  to_ports_.push_back(to_port);
  follow_chain(chain);
}

void Sink::follow_chain(const ChainConfig& chain) {
  paths_.emplace_back(deployment_, chain, [](const NfConfig& nf) { return nf_gates(nf_types().at(nf.type), nf.args); });
  latency_.emplace_back(1 << 18);
  histograms_.emplace_back(static_cast<double>(rte_get_tsc_hz()));
  breakdowns_.emplace_back(deployment_.nfs.size());
  bool scaled =
      std::any_of(chain.nfs.begin(), chain.nfs.end(), [&](int nf) { return deployment_.nfs[nf].scale_group >= 0; });
  flow_order_.emplace_back(scaled ? std::optional<FlowOrder>(FlowOrder{}) : std::nullopt);
  ChainDelivery& delivery = delivery_.emplace_back();
  if (scaled) delivery.flow_reorders = 0;
}

uint64_t Sink::poll() {
  rte_mbuf* pkts[kMaxBurst];
  uint64_t taken = 0;
  for (size_t c = 0; c < exits_.size(); c++) {
    if (!exits_[c]) continue;  // a removed chain's
    uint16_t n = exits_[c]->rx_burst(pkts, deployment_.burst);
    if (n == 0) continue;
    const uint64_t now_tsc = rte_get_tsc_cycles();
    ChainDelivery& delivery = delivery_[c];
    for (uint16_t i = 0; i < n; i++) {
      const PacketMeta* meta = meta_of(pkts[i]);
      if (!paths_[c].allows(meta->hops, meta->hop_count, meta->branch_hops, meta->hop_gates)) delivery.hop_errors++;
      if (flow_order_[c] && !flow_order_[c]->in_order(pkts[i], meta->seq)) ++*delivery.flow_reorders;
      delivery.delivered_bytes += rte_pktmbuf_pkt_len(pkts[i]) + 4;  // with FCS, as frame sizes are given
      if (meta->seq % deployment_.latency_sample_every == 0) {
        // The histogram is live (warm-up included); the percentiles are the measurement window's.
        histograms_[c].add(now_tsc - meta->tx_tsc);
        recent_max_latency_ = std::max(recent_max_latency_, now_tsc - meta->tx_tsc);
        if (measuring_) latency_[c].add(now_tsc - meta->tx_tsc);
      }
      // Traced packets are added up over the span the latency percentiles cover (until their store is full), so
      // that the breakdown explains the latency the run reports, not a later stretch of it.
      if (traces_ && measuring_ && meta->trace_slot && !latency_[c].full()) {
        if (const TraceSlot* trace = trace_of(traces_, meta))
          breakdowns_[c].add(*trace, meta->tx_tsc, now_tsc);
        else
          breakdowns_[c].add_lost();
      }
      if (capture_) capture_->write(pkts[i], now_tsc);  // it stops at its limit
    }
    delivery.delivered += n;
    taken += n;
    if (to_ports_[c])
      to_ports_[c]->transmit(pkts, n);  // what the device refuses is its tx_refused
    else
      rte_pktmbuf_free_bulk(pkts, n);
  }
  return taken;
}

}  // namespace tandem
