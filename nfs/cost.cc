// cost: burns a configured number of TSC cycles (or nanoseconds) per packet, and per byte: the papers' synthetic NF.
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
    .help = "Burns cycles per packet (papers: light 50, medium 150, heavy 250) plus optional cycles per byte; "
            "or nanoseconds per packet, the same share of a core on every machine.",
    .args = {{.name = "cycles",
              .type = ArgType::Integer,
              .default_value = 50,
              .help = "TSC cycles per packet",
              .min = 0,
              .max = 1e6},
             {.name = "cycles_per_byte",
              .type = ArgType::Number,
              .default_value = 0.0,
              .help = "extra TSC cycles per byte of frame, for variable-cost NFs",
              .min = 0,
              .max = 500},
             // Tests that need a load that overloads (or fits) a core on any host give time, not cycles: TSC
             // rates differ by 2x between our hosts, so a cycle count is a different share of a core on each.
             {.name = "ns",
              .type = ArgType::Number,
              .default_value = 0.0,
              .help = "nanoseconds per packet; when above 0 it replaces cycles",
              .min = 0,
              .max = 1e6}},
    .create =
        [](const json& args, const NfContext&) {
          double ns = args["ns"].get<double>();
          uint64_t cycles = ns > 0 ? static_cast<uint64_t>(ns * 1e-9 * static_cast<double>(rte_get_tsc_hz()))
                                   : args["cycles"].get<uint64_t>();
          return std::make_unique<Cost>(cycles, args["cycles_per_byte"].get<double>());
        },
    .descriptor = {},  // spins on the frame length (mbuf metadata), reads no header
});

}  // namespace
}  // namespace tandem
