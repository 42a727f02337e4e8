// validate_url (μNF): drops HTTP requests whose decoded URL matches an attack signature (Hyperscan); passes the rest.
#include <string>
#include <vector>

#include "http_request.h"
#include "nf.h"
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
    batch.filter([this](rte_mbuf* m) {
      std::optional<HttpRequestLine> request = http_request_line(m);
      if (!request) {
        not_http_++;
        return true;  // not an HTTP request: not this NF's to judge
      }
      checked_++;
      decode_url(request->url, decoded_);
      std::optional<size_t> match = patterns_.first_match(decoded_);
      if (match) matches_[*match]++;
      return !match;
    });
  }

  json report() const override {
    return {{"requests_checked", checked_}, {"not_http", not_http_}, {"dropped_by_pattern", matches_}};
  }

 private:
  UrlPatterns patterns_;
  std::string decoded_;  // reused: no allocation per packet once it has grown to the longest URL
  std::vector<uint64_t> matches_;
  uint64_t checked_ = 0, not_http_ = 0;
};

const NfRegistration registration({
    .name = "validate_url",
    .help = "μNF: drops HTTP requests whose URL, percent-decoded, matches an attack signature (Hyperscan, all "
            "patterns in one scan); other packets pass.",
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
    .descriptor = {.may_drop = true,
                   .reads = {HeaderField::EthType, HeaderField::Ipv4VersionIhl, HeaderField::Ipv4TotalLength,
                             HeaderField::Ipv4Protocol, HeaderField::L4Other,
                             HeaderField::Payload}},  // L4Other: TCP's data offset
});

}  // namespace
}  // namespace tandem
