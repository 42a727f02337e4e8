// validate_url (μNF): drops HTTP requests that an attack detector judges hostile; passes the rest.
#include <rte_cycles.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core_rule_set.h"
#include "dataplane/packets/ip_view.h"
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

// The two detectors: Hyperscan signatures over the decoded URL (fast, few attacks), or the OWASP Core Rule Set run by
// ModSecurity (what WAFs run: most attacks, hundreds of times the cost).
constexpr const char* kSignatures = "signatures";
constexpr const char* kCoreRuleSet = "crs";

// The spec's crs_exclusions ([{path, args: [...]}]) as the engine takes them; what is malformed goes to `errors`
// (when given) under `path`.crs_exclusions[i] and is left out.
std::vector<CrsExclusion> exclusions_from(const json& args, const std::string& path, SpecErrors* errors) {
  std::vector<CrsExclusion> exclusions;
  json given = args.value("crs_exclusions", json::array());
  if (!given.is_array()) return exclusions;  // the argument's own check says why
  for (size_t i = 0; i < given.size(); i++) {
    std::string where = path + ".crs_exclusions[" + std::to_string(i) + "]";
    const json& entry = given[i];
    auto refuse = [&](const std::string& field, const std::string& why) {
      if (errors) errors->push_back({where + (field.empty() ? "" : "." + field), why});
    };
    if (!entry.is_object()) {
      refuse("", "must be an object {path: /prefix, args: [names]}");
      continue;
    }
    for (const auto& [key, value] : entry.items())
      if (key != "path" && key != "args") refuse(key, "unknown field (an exclusion has path and args)");
    if (!entry.contains("path") || !entry["path"].is_string()) {
      refuse("path", "must be a string: the path prefix the exclusion applies under");
      continue;
    }
    if (!entry.contains("args") || !entry["args"].is_array()) {
      refuse("args", "must be a list of query argument names");
      continue;
    }
    CrsExclusion exclusion{entry["path"].get<std::string>(), {}};
    bool names = true;
    for (size_t a = 0; a < entry["args"].size(); a++) {
      if (!entry["args"][a].is_string()) {
        refuse("args[" + std::to_string(a) + "]", "must be a string");
        names = false;
      } else {
        exclusion.arguments.push_back(entry["args"][a].get<std::string>());
      }
    }
    if (!names) continue;
    if (auto problem = crs_exclusion_problem(exclusion)) {
      refuse(problem->first, problem->second);
      continue;
    }
    exclusions.push_back(std::move(exclusion));
  }
  return exclusions;
}

void check_core_rule_set(const json& args, const std::string& path, SpecErrors& errors) {
  if (!args.value("patterns", json::array()).empty())
    errors.push_back({path + ".patterns", "only the signatures engine takes patterns"});
  size_t before = errors.size();
  std::vector<CrsExclusion> exclusions = exclusions_from(args, path, &errors);
  json level = args.value("paranoia_level", json(1));
  // A level that is no integer: the argument's own check says why; refused exclusions: said above.
  if (!level.is_number_integer() || errors.size() != before) return;
  try {
    CoreRuleSet rules(level.get<int>(), exclusions);  // loads in ~0.1 s: the spec is refused now, not at NF start
  } catch (const std::exception& e) {
    errors.push_back({path + ".engine", std::string(e.what()) +
                                            " (Debian's modsecurity-crs is installed by "
                                            "scripts/setup.sh; its rules are read from " +
                                            CoreRuleSet::kRulesFolder + ")"});
  }
}

class ValidateUrl final : public NetworkFunction {
 public:
  explicit ValidateUrl(const json& args) {
    if (args["engine"] == kCoreRuleSet) {
      rule_set_ = std::make_unique<CoreRuleSet>(args["paranoia_level"].get<int>(), exclusions_from(args, "", nullptr));
    } else {
      std::vector<std::string> patterns = patterns_from(args);
      patterns_ = std::make_unique<UrlPatterns>(patterns);
      matches_.assign(patterns.size(), 0);
    }
  }

  void process(Batch& batch) override {
    uint64_t now = rte_get_tsc_cycles();
    batch.filter([&](rte_mbuf* m) {
      // A request cut into IP fragments is judged by no one here (fragments are not reassembled) but whole by the
      // server's kernel: its fragments are dropped, as a WAF drops what it cannot judge. Clients send TCP with DF
      // set and segments that fit the path; a fragmented request is an evasion. A later IPv6 fragment does not say
      // its protocol: dropped too.
      IpInFrame ip = ip_in_frame(m);
      if (ip.fragment && (ip.l4_protocol == IPPROTO_TCP || (ip.version == 6 && ip.l4_offset == 0))) {
        fragments_++;
        return false;
      }
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
      if (hostile(*segment.line)) return false;  // the flow stays before this segment: a retransmission is judged again
      streams_.take_line();
      return true;
    });
  }

  json report() const override {
    json report = {{"requests_checked", checked_},          {"not_http", not_http_},
                   {"reassembled", reassembled_},           {"partial_segments", partial_},
                   {"dropped_out_of_order", out_of_order_}, {"dropped_too_long", too_long_},
                   {"dropped_flows_full", table_full_},     {"dropped_fragments", fragments_}};
    if (rule_set_) {
      report["dropped_by_crs"] = blocked_;
      report["crs_rules_matched"] = json::object();  // by rule id: which of the CRS's rules found what it blocked
      for (const auto& [id, count] : rules_matched_) report["crs_rules_matched"][std::to_string(id)] = count;
    } else {
      report["dropped_by_pattern"] = matches_;
    }
    return report;
  }

 private:
  bool hostile(const HttpRequestLine& line) {
    if (rule_set_) {
      if (!rule_set_->blocks(line.method, line.url, matched_rules_)) return false;
      blocked_++;
      for (uint32_t id : matched_rules_) rules_matched_[id]++;
      return true;
    }
    decode_url(line.url, decoded_);
    std::optional<size_t> match = patterns_->first_match(decoded_);
    if (match) matches_[*match]++;
    return match.has_value();
  }

  std::unique_ptr<UrlPatterns> patterns_;  // the signatures engine
  std::unique_ptr<CoreRuleSet> rule_set_;  // the crs engine
  RequestLineStreams streams_;
  std::string decoded_;  // reused: no allocation per packet once it has grown to the longest URL
  std::vector<uint64_t> matches_;
  std::vector<uint32_t> matched_rules_;  // reused across requests
  std::map<uint32_t, uint64_t> rules_matched_;
  uint64_t blocked_ = 0, fragments_ = 0;
  uint64_t checked_ = 0, not_http_ = 0, reassembled_ = 0, partial_ = 0, out_of_order_ = 0, too_long_ = 0,
           table_full_ = 0;
};

const NfRegistration registration({
    .name = "validate_url",
    .help = "μNF: drops HTTP requests that its engine judges an attack: `signatures`, regular expressions over the "
            "percent-decoded URL (Hyperscan, all patterns in one scan), or `crs`, the OWASP Core Rule Set's "
            "SQL-injection rules run by ModSecurity on the request line (URL decoding and normalisation, libinjection; "
            "catches most attacks at hundreds of times the cost); other packets pass. A request line split across TCP "
            "segments is put back together per flow and judged whole (the segment that completes it is dropped); "
            "segments beyond a gap in one, a line over 8 KiB, a new split line while 4,096 flows are followed, and "
            "IP fragments of TCP (not reassembled: what the server would read whole) are dropped.",
    .args = {{.name = "engine",
              .type = ArgType::Choice,
              .default_value = kSignatures,
              .help = "`signatures` (Hyperscan over the decoded URL) or `crs` (the OWASP Core Rule Set's SQL-injection "
                      "rules under ModSecurity)",
              .choices = {kSignatures, kCoreRuleSet}},
             {.name = "patterns",
              .type = ArgType::List,
              .default_value = json::array(),
              .help = "signatures engine: regular expressions (case-insensitive); empty: the built-in SQL-injection "
                      "signatures"},
             {.name = "paranoia_level",
              .type = ArgType::Integer,
              .default_value = 1,
              .help = "crs engine: the CRS paranoia level (higher catches more and blocks more benign requests)",
              .min = 1,
              .max = 4},
             {.name = "crs_exclusions",
              .type = ArgType::List,
              .default_value = json::array(),
              .help = "crs engine: rule exclusions, as a WAF's operator writes them for an application whose "
                      "parameter carries code or queries: [{path: /prefix, args: [name, ...]}]: under paths that "
                      "begin with the prefix, the SQL-injection rules do not read those query arguments"}},
    .check =
        [](const json& args, const std::string& path, SpecErrors& errors) {
          if (args.value("engine", kSignatures) == kCoreRuleSet) {
            check_core_rule_set(args, path, errors);
            return;
          }
          if (!args.value("crs_exclusions", json::array()).empty())
            errors.push_back({path + ".crs_exclusions", "only the crs engine takes exclusions"});
          if (!args.contains("patterns") || !args["patterns"].is_array()) return;
          for (size_t i = 0; i < args["patterns"].size(); i++) {
            std::string where = path + ".patterns[" + std::to_string(i) + "]";
            if (!args["patterns"][i].is_string()) {
              errors.push_back({where, "must be a string (a regular expression)"});
            } else if (auto error = UrlPatterns::compile_error(args["patterns"][i].get<std::string>())) {
              errors.push_back({where, "not a pattern Hyperscan compiles: " + *error});
            }
          }
        },
    .create = [](const json& args, const NfContext&) { return std::make_unique<ValidateUrl>(args); },
    // Stateless to the composer: its flows only put lines back together, so two alike in a row judge alike (the
    // second sees what the first passed, whole lines and their pieces) and one of them is redundant.
    // Addresses and ports: the flow of a split request line; L4Other: TCP's data offset, sequence number and flags;
    // the fragment field: fragments are dropped.
    .descriptor = {.may_drop = true,
                   .reads = {HeaderField::EthType, HeaderField::Ipv4VersionIhl, HeaderField::Ipv4TotalLength,
                             HeaderField::Ipv4Fragment, HeaderField::Ipv4Protocol, HeaderField::Ipv4Src,
                             HeaderField::Ipv4Dst, HeaderField::L4SrcPort, HeaderField::L4DstPort, HeaderField::L4Other,
                             HeaderField::Payload}},
});

}  // namespace
}  // namespace tandem
