// macswap: swaps the Ethernet source and destination addresses, the lightest possible NF.
#include <rte_ether.h>

#include "nf.h"

namespace tandem {
namespace {

class MacSwap final : public NetworkFunction {
 public:
  void process(Batch& batch) override {
    batch.for_each([&](uint16_t i) {
      auto* eth = rte_pktmbuf_mtod(batch.pkts[i], rte_ether_hdr*);
      rte_ether_addr tmp = eth->src_addr;
      eth->src_addr = eth->dst_addr;
      eth->dst_addr = tmp;
    });
  }
};

const NfRegistration registration({
    .name = "macswap",
    .help = "Swaps source and destination MAC addresses.",
    .args = {},
    .create = [](const json&, const NfContext&) { return std::make_unique<MacSwap>(); },
    .descriptor = {.reads = {HeaderField::EthDst, HeaderField::EthSrc},
                   .writes = {HeaderField::EthDst, HeaderField::EthSrc}},
});

}  // namespace
}  // namespace tandem
