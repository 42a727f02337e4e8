// The OWASP Core Rule Set's SQL-injection rules, run by ModSecurity (libmodsecurity3) on a request's line.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tandem {

// A rule exclusion as a WAF's operator writes one for an application whose parameter legitimately carries what the
// rules flag (a program, a query): under paths that begin with `path_prefix`, the SQL-injection rules do not read
// these query arguments (the CRS's "exclusion rules before the CRS", ctl:ruleRemoveTargetByTag=attack-sqli;ARGS:x).
// The other arguments of those requests, and those arguments elsewhere, are judged as before.
struct CrsExclusion {
  std::string path_prefix;
  std::vector<std::string> arguments;
};

// Why an exclusion cannot be written into ModSecurity's configuration as asked (it is text the rule parser reads:
// a quote or a separator would change the rule), naming the part ("path", "args[1]"); nullopt when it can.
std::optional<std::pair<std::string, std::string>> crs_exclusion_problem(const CrsExclusion& exclusion);

// Why ModSecurity and the CRS: they are what the field runs as a WAF (nginx, Apache, Envoy ports), with URL
// decoding and normalisation (t:urlDecodeUni, t:utf8toUnicode, ...) and libinjection's SQL tokenizer (@detectSQLi)
// behind the CRS's own expressions; a request is blocked when its anomaly score reaches the CRS's threshold (5, one
// critical rule). The CRS comes from Debian's modsecurity-crs; only its initialisation (901), SQL-injection (942) and
// request blocking (949) files are loaded, with the settings of its crs-setup.conf.example written here (so an
// administrator's edits to /etc/modsecurity do not change what a spec means).
// Cost: ModSecurity builds a transaction per request (hundreds of µs on our 2 vCPU VMs, see README), so it judges
// request lines only, never every packet.
class CoreRuleSet {
 public:
  static constexpr const char* kRulesFolder = "/usr/share/modsecurity-crs/rules";

  // Loads the rules at `paranoia_level` (1-4: higher catches more and blocks more benign requests) with these
  // exclusions (each checked by crs_exclusion_problem: std::invalid_argument otherwise); throws std::runtime_error
  // with ModSecurity's reason when they do not load (the CRS not installed, say).
  explicit CoreRuleSet(int paranoia_level, const std::vector<CrsExclusion>& exclusions = {});
  ~CoreRuleSet();
  CoreRuleSet(const CoreRuleSet&) = delete;
  CoreRuleSet& operator=(const CoreRuleSet&) = delete;

  // Whether the CRS blocks a request with this method and request target (as sent, percent-encoded); the ids of the
  // rules that matched go to `matched_rules` (cleared first), the blocking evaluation's own (949xxx) left out.
  bool blocks(std::string_view method, std::string_view target, std::vector<uint32_t>& matched_rules);

 private:
  struct Engine;
  std::unique_ptr<Engine> engine_;
  std::string method_, target_;  // NUL-terminated copies for ModSecurity's C API, reused across requests
};

}  // namespace tandem
