// pass: forwards every packet unchanged; where a composed SFC's labelled exits meet before the sink.
#include "nf.h"

namespace tandem {
namespace {

class Pass final : public NetworkFunction {
 public:
  void process(Batch&) override {}
};

const NfRegistration registration({
    .name = "pass",
    .help = "μNF: forwards every packet unchanged. The composer ends an SFC with one where its last VNF's exits are a "
            "classifier's labelled edges (a labelled edge needs a node to lead to).",
    .args = {},
    .create = [](const json&, const NfContext&) { return std::make_unique<Pass>(); },
    .descriptor = {},
});

}  // namespace
}  // namespace tandem
