// validate_url (μNF): drops HTTP requests whose decoded URL matches an attack signature (Hyperscan); passes the rest.
#include <rte_cycles.h>

#include <string>
#include <vector>

#include "http_request.h"
#include "nf.h"
#include "request_line_stream.h"
#include "url_patterns.h"

namespace tandem {

namespace {

std::vector<std::string> patterns_from(const json& args) {
  if (args["patterns"].empty()) return sql_injection_patterns();
  return args["patterns"].get<std::vector<std::string>>();
}

class ValidateUrl final : public NetworkFunction {
 public:
  explicit ValidateUrl(const std::vector<std::string>& patterns) : patterns_(patterns), matches_(patterns.size(), 0) {}

  void process(Batch& batch) override {
    uint64_t now = rte_get_tsc_cycles();
    batch.filter([&](rte_mbuf* m) {
      RequestLineStreams::Segment segment = streams_.feed(m, now);
      switch (segment.verdict) {
        case RequestLineStreams::Verdict::kNotHttp:
          not_http_++;
          return true;  // not an HTTP request: not this NF's to judge
        case RequestLineStreams::Verdict::kPartial:
        case RequestLineStreams::Verdict::kRetransmitted:
          partial_++;
          return true;  // nothing to judge yet, or judged already: the line is judged when it is whole
        case RequestLineStreams::Verdict::kOutOfOrder:
          out_of_order_++;
          return false;  // unread, it could finish an attack: its sender sends it again once the gap is filled
        case RequestLineStreams::Verdict::kTooLong:
          too_long_++;
          return false;
        case RequestLineStreams::Verdict::kTableFull:
          table_full_++;
          return false;  // a split line that cannot be followed is not let through unread
        case RequestLineStreams::Verdict::kComplete:
          break;
      }
      checked_++;
      if (segment.spanned) reassembled_++;
      decode_url(segment.line->url, decoded_);
      std::optional<size_t> match = patterns_.first_match(decoded_);
      if (match) {
        matches_[*match]++;
        return false;  // the flow stays before this segment: its retransmission is judged again
      }
      streams_.take_line();
      return true;
    });
  }

  json report() const override {
    return {{"requests_checked", checked_},   {"not_http", not_http_},
            {"dropped_by_pattern", matches_}, {"reassembled", reassembled_},
            {"partial_segments", partial_},   {"dropped_out_of_order", out_of_order_},
            {"dropped_too_long", too_long_},  {"dropped_flows_full", table_full_}};
  }

 private:
  UrlPatterns patterns_;
  RequestLineStreams streams_;
  std::string decoded_;  // reused: no allocation per packet once it has grown to the longest URL
  std::vector<uint64_t> matches_;
  uint64_t checked_ = 0, not_http_ = 0, reassembled_ = 0, partial_ = 0, out_of_order_ = 0, too_long_ = 0,
           table_full_ = 0;
};

const NfRegistration registration({
    .name = "validate_url",
    .help = "μNF: drops HTTP requests whose URL, percent-decoded, matches an attack signature (Hyperscan, all "
            "patterns in one scan); other packets pass. A request line split across TCP segments is put back "
            "together per flow and judged whole (the segment that completes it is dropped); segments beyond a gap in "
            "one, a line over 8 KiB, and a new split line while 4,096 flows are followed are dropped.",
    .args = {{.name = "patterns",
              .type = ArgType::List,
              .default_value = json::array(),
              .help = "regular expressions (case-insensitive); empty: the built-in SQL-injection signatures"}},
    .check =
        [](const json& args, const std::string& path, SpecErrors& errors) {
          if (!args["patterns"].is_array()) return;
          for (size_t i = 0; i < args["patterns"].size(); i++) {
            std::string where = path + ".patterns[" + std::to_string(i) + "]";
            if (!args["patterns"][i].is_string()) {
              errors.push_back({where, "must be a string (a regular expression)"});
            } else if (auto error = UrlPatterns::compile_error(args["patterns"][i].get<std::string>())) {
              errors.push_back({where, "not a pattern Hyperscan compiles: " + *error});
            }
          }
        },
    .create = [](const json& args, const NfContext&) { return std::make_unique<ValidateUrl>(patterns_from(args)); },
    // Stateless to the composer: its flows only put lines back together, so two alike in a row judge alike (the
    // second sees what the first passed, whole lines and their pieces) and one of them is redundant.
    // Addresses and ports: the flow of a split request line; L4Other: TCP's data offset, sequence number and flags.
    .descriptor = {.may_drop = true,
                   .reads = {HeaderField::EthType, HeaderField::Ipv4VersionIhl, HeaderField::Ipv4TotalLength,
                             HeaderField::Ipv4Protocol, HeaderField::Ipv4Src, HeaderField::Ipv4Dst,
                             HeaderField::L4SrcPort, HeaderField::L4DstPort, HeaderField::L4Other,
                             HeaderField::Payload}},
});

}  // namespace
}  // namespace tandem
