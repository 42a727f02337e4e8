// http_classifier (μNF): sends HTTP requests to its gate "http" and every other packet to "other", by the TCP payload.
#include "http_request.h"
#include "nf.h"

namespace tandem {

namespace {

constexpr uint8_t kOtherGate = 0;
constexpr uint8_t kHttpGate = 1;

class HttpClassifier final : public NetworkFunction {
 public:
  void process(Batch& batch) override {
    batch.for_each([&](uint16_t i) {
      bool http = http_request_line(batch.pkts[i]).has_value();
      batch.gates[i] = http ? kHttpGate : kOtherGate;
      (http ? http_ : other_)++;
    });
  }

  json report() const override { return {{"http", http_}, {"other", other_}}; }

 private:
  uint64_t http_ = 0, other_ = 0;
};

const NfRegistration registration({
    .name = "http_classifier",
    .help = "μNF: labels each packet by whether its TCP payload starts with an HTTP request line (gate \"http\") or "
            "not (gate \"other\"); changes and drops nothing. A labelled fan-out after it routes by the label.",
    .create = [](const json&, const NfContext&) { return std::make_unique<HttpClassifier>(); },
    .descriptor = {.reads = {HeaderField::EthType, HeaderField::Ipv4VersionIhl, HeaderField::Ipv4TotalLength,
                             HeaderField::Ipv4Protocol, HeaderField::L4Other,
                             HeaderField::Payload},  // L4Other: TCP's data offset
                   .gates = {"other", "http"}},
});

}  // namespace
}  // namespace tandem
