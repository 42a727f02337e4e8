// count_url (μNF): counts HTTP requests per URL; read-only, drops nothing.
#include <rte_cycles.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "nf.h"
#include "printable_bytes.h"
#include "request_line_stream.h"

namespace tandem {

namespace {

// Looks strings up by string_view, so a URL already counted costs no allocation.
struct UrlHash {
  using is_transparent = void;
  size_t operator()(std::string_view url) const { return std::hash<std::string_view>{}(url); }
};

class CountUrl final : public NetworkFunction {
 public:
  explicit CountUrl(size_t max_urls) : max_urls_(max_urls) { counts_.reserve(max_urls); }

  void process(Batch& batch) override {
    uint64_t now = rte_get_tsc_cycles();
    batch.for_each([&](uint16_t i) {
      // A request line split across segments is counted once, at the segment that completes it.
      RequestLineStreams::Segment segment = streams_.feed(batch.pkts[i], now);
      if (segment.verdict != RequestLineStreams::Verdict::kComplete) {
        if (segment.verdict == RequestLineStreams::Verdict::kNotHttp) not_http_++;
        return;
      }
      streams_.take_line();
      const std::optional<HttpRequestLine>& request = segment.line;
      auto found = counts_.find(request->url);
      if (found != counts_.end()) {
        found->second++;
      } else if (counts_.size() < max_urls_) {
        counts_.emplace(std::string(request->url), 1);
      } else {
        untracked_++;  // the table is full: counted, but not per URL
      }
    });
  }

  json report() const override {
    std::vector<std::pair<std::string, uint64_t>> top(counts_.begin(), counts_.end());
    size_t shown = std::min<size_t>(top.size(), 10);
    std::partial_sort(top.begin(), top.begin() + static_cast<long>(shown), top.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    json top_urls = json::array();
    // A URL holds whatever bytes a client sent: escaped, so one attacker's request cannot make the report unwritable.
    for (size_t i = 0; i < shown; i++)
      top_urls.push_back({{"url", printable_bytes(top[i].first)}, {"requests", top[i].second}});
    return {{"urls", counts_.size()}, {"top", top_urls}, {"untracked_requests", untracked_}, {"not_http", not_http_}};
  }

  uint64_t count(std::string_view url) const {
    auto found = counts_.find(url);
    return found == counts_.end() ? 0 : found->second;
  }

 private:
  size_t max_urls_;
  RequestLineStreams streams_;
  std::unordered_map<std::string, uint64_t, UrlHash, std::equal_to<>> counts_;
  uint64_t untracked_ = 0, not_http_ = 0;
};

const NfRegistration registration({
    .name = "count_url",
    .help = "μNF: counts HTTP requests per URL (the top ten in its report), a request line split across TCP "
            "segments once; passes every packet.",
    .args = {{.name = "max_urls",
              .type = ArgType::Integer,
              .default_value = 4096,
              .help = "distinct URLs counted one by one; more are counted as untracked",
              .min = 1,
              .max = 1000000}},
    .create = [](const json& args,
                 const NfContext&) { return std::make_unique<CountUrl>(args["max_urls"].get<size_t>()); },
    // Addresses and ports: the flow of a split request line; L4Other: TCP's data offset, sequence number and flags.
    .descriptor = {.stateful = true,
                   .reads = {HeaderField::EthType, HeaderField::Ipv4VersionIhl, HeaderField::Ipv4TotalLength,
                             HeaderField::Ipv4Protocol, HeaderField::Ipv4Src, HeaderField::Ipv4Dst,
                             HeaderField::L4SrcPort, HeaderField::L4DstPort, HeaderField::L4Other,
                             HeaderField::Payload}},
});

}  // namespace
}  // namespace tandem
