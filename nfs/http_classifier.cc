// http_classifier (μNF): sends HTTP requests to its gate "http" and every other packet to "other", by the TCP payload.
#include <rte_cycles.h>

#include "nf.h"
#include "request_line_stream.h"

namespace tandem {

namespace {

constexpr uint8_t kOtherGate = 0;
constexpr uint8_t kHttpGate = 1;

class HttpClassifier final : public NetworkFunction {
 public:
  void process(Batch& batch) override {
    uint64_t now = rte_get_tsc_cycles();
    batch.for_each([&](uint16_t i) {
      RequestLineStreams::Segment segment = streams_.feed(batch.pkts[i], now);
      // Every piece of a request line goes where a whole one goes: the NFs behind "http" judge it, and refuse what
      // they cannot read. Labelling the rest of a split line "other" would let it past them.
      bool http = segment.verdict != RequestLineStreams::Verdict::kNotHttp;
      if (segment.verdict == RequestLineStreams::Verdict::kComplete) streams_.take_line();
      batch.gates[i] = http ? kHttpGate : kOtherGate;
      (http ? http_ : other_)++;
    });
  }

  json report() const override { return {{"http", http_}, {"other", other_}}; }

 private:
  RequestLineStreams streams_;
  uint64_t http_ = 0, other_ = 0;
};

const NfRegistration registration({
    .name = "http_classifier",
    .help = "μNF: labels each packet by whether its TCP payload holds an HTTP request line or a piece of one split "
            "across segments (gate \"http\") or not (gate \"other\"); changes and drops nothing. A labelled fan-out "
            "after it routes by the label.",
    .create = [](const json&, const NfContext&) { return std::make_unique<HttpClassifier>(); },
    // Addresses and ports: the flow of a split request line; L4Other: TCP's data offset, sequence number and flags.
    .descriptor = {.reads = {HeaderField::EthType, HeaderField::Ipv4VersionIhl, HeaderField::Ipv4TotalLength,
                             HeaderField::Ipv4Protocol, HeaderField::Ipv4Src, HeaderField::Ipv4Dst,
                             HeaderField::L4SrcPort, HeaderField::L4DstPort, HeaderField::L4Other,
                             HeaderField::Payload},
                   .gates = {"other", "http"}},
});

}  // namespace
}  // namespace tandem
