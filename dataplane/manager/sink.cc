// Packet sink: delivery counts, hop-order verification and latency sampling.
#include "sink.h"

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "contract/batch.h"
#include "contract/packet_meta.h"
#include "dataplane/ports/ring_port.h"

namespace tandem {

bool hops_match(const uint8_t* hops, uint8_t hop_count, const std::vector<int>& chain_nfs) {
  if (hop_count != chain_nfs.size() || hop_count > kMaxHops) return false;
  for (uint8_t i = 0; i < hop_count; i++)
    if (hops[i] != chain_nfs[i]) return false;
  return true;
}

namespace {
// The NFs of a chain that stamp hops: all but external ones, which are unmodified applications.
std::vector<int> stamping_nfs(const Deployment& deployment, const ChainConfig& chain) {
  std::vector<int> nfs;
  for (int nf : chain.nfs)
    if (!deployment.nfs[nf].external()) nfs.push_back(nf);
  return nfs;
}
}  // namespace

Sink::Sink(const Deployment& deployment, const std::vector<rte_ring*>& rings, StatsZone& stats)
    : deployment_(deployment), delivery_(deployment.chains.size()) {
  for (const ChainConfig& chain : deployment.chains) {
    exits_.push_back(std::make_unique<RingIngress>(rings[chain.rings.back()], stats.rings[chain.rings.back()]));
    expected_hops_.push_back(stamping_nfs(deployment, chain));
    latency_.emplace_back(1 << 18);
  }
  if (!deployment.capture_path.empty())
    capture_ = std::make_unique<PcapCapture>(deployment.capture_path, deployment.capture_limit, static_cast<double>(rte_get_tsc_hz()));
}

void Sink::poll(uint64_t now_tsc) {
  rte_mbuf* pkts[kMaxBurst];
  for (size_t c = 0; c < exits_.size(); c++) {
    uint16_t n = exits_[c]->rx_burst(pkts, deployment_.burst);
    if (n == 0) continue;
    ChainDelivery& delivery = delivery_[c];
    const std::vector<int>& chain_nfs = expected_hops_[c];
    for (uint16_t i = 0; i < n; i++) {
      const PacketMeta* meta = meta_of(pkts[i]);
      if (!hops_match(meta->hops, meta->hop_count, chain_nfs)) delivery.hop_errors++;
      delivery.delivered_bytes += rte_pktmbuf_pkt_len(pkts[i]) + 4;  // with FCS, as frame sizes are given
      if (measuring_ && meta->seq % deployment_.latency_sample_every == 0) latency_[c].add(now_tsc - meta->tx_tsc);
      if (capture_) capture_->write(pkts[i], now_tsc);  // it stops at its limit
    }
    delivery.delivered += n;
    rte_pktmbuf_free_bulk(pkts, n);
  }
}

}  // namespace tandem
