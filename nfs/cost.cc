// cost: burns a configured number of TSC cycles per packet (and per byte), the papers' synthetic NF.
#include <rte_cycles.h>

#include "nf.h"

namespace tandem {
namespace {

class Cost final : public NetworkFunction {
 public:
  Cost(uint64_t cycles_per_packet, double cycles_per_byte)
      : cycles_per_packet_(cycles_per_packet), cycles_per_byte_(cycles_per_byte) {}

  void process(Batch& batch) override {
    // One spin per batch: reading the TSC per packet would itself cost as much as a light NF.
    uint64_t bytes = 0;
    for (uint16_t i = 0; i < batch.count; i++) bytes += rte_pktmbuf_pkt_len(batch.pkts[i]);
    uint64_t budget = cycles_per_packet_ * batch.count + static_cast<uint64_t>(cycles_per_byte_ * bytes);
    uint64_t start = rte_rdtsc();
    while (rte_rdtsc() - start < budget) rte_pause();
  }

 private:
  uint64_t cycles_per_packet_;
  double cycles_per_byte_;
};

const NfRegistration registration({
    .name = "cost",
    .help = "Burns cycles per packet (papers: light 50, medium 150, heavy 250) plus optional cycles per byte.",
    .args = {{.name = "cycles", .type = ArgType::Integer, .default_value = 50,
              .help = "TSC cycles per packet", .min = 0, .max = 1e6},
             {.name = "cycles_per_byte", .type = ArgType::Number, .default_value = 0.0,
              .help = "extra TSC cycles per byte of frame, for variable-cost NFs", .min = 0, .max = 500}},
    .create =
        [](const json& args, const NfContext&) {
          return std::make_unique<Cost>(args["cycles"].get<uint64_t>(), args["cycles_per_byte"].get<double>());
        },
});

}  // namespace
}  // namespace tandem
