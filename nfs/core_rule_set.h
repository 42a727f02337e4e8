// The OWASP Core Rule Set's SQL-injection rules, run by ModSecurity (libmodsecurity3) on a request's line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tandem {

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

  // Loads the rules at `paranoia_level` (1-4: higher catches more and blocks more benign requests); throws
  // std::runtime_error with ModSecurity's reason when they do not load (the CRS not installed, say).
  explicit CoreRuleSet(int paranoia_level);
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
