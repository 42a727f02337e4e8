// drop: drops a configured fraction of packets at random, to emulate a filtering NF.
#include <rte_random.h>

#include "nf.h"

namespace tandem {
namespace {

class Drop final : public NetworkFunction {
 public:
  explicit Drop(double fraction)
      : threshold_(fraction >= 1.0 ? UINT64_MAX : static_cast<uint64_t>(fraction * 18446744073709551616.0)) {}

  void process(Batch& batch) override {
    batch.filter([this](rte_mbuf*) { return rte_rand() >= threshold_ && threshold_ != UINT64_MAX; });
  }

 private:
  uint64_t threshold_;  // a packet is dropped when a uniform 64-bit random number falls below it
};

const NfRegistration registration({
    .name = "drop",
    .help = "Drops a random fraction of packets.",
    .args = {{.name = "fraction",
              .type = ArgType::Number,
              .default_value = 0.1,
              .help = "fraction of packets to drop",
              .min = 0,
              .max = 1}},
    .create = [](const json& args, const NfContext&) { return std::make_unique<Drop>(args["fraction"].get<double>()); },
    .descriptor = {.may_drop = true, .random = true},
});

}  // namespace
}  // namespace tandem
