// A set of regular expressions matched against URLs in one pass, by Hyperscan (the multi-pattern DPI matcher).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct hs_database;
struct hs_scratch;

namespace tandem {

// Why Hyperscan and not PCRE2: every pattern is matched in one linear scan of the URL whatever their number (PCRE2
// runs them one by one and backtracks, so a hostile URL can cost exponential time), and it is built for DPI.
// It refuses back-references and look-arounds, which attack signatures do without.
class UrlPatterns {
 public:
  // Compiles `patterns` (case-insensitive); throws std::invalid_argument naming the pattern that does not compile.
  explicit UrlPatterns(const std::vector<std::string>& patterns);
  ~UrlPatterns();
  UrlPatterns(const UrlPatterns&) = delete;
  UrlPatterns& operator=(const UrlPatterns&) = delete;

  // The index of the first pattern that matches `text`, if any.
  std::optional<size_t> first_match(std::string_view text);

  // Nothing when `pattern` compiles, else Hyperscan's reason.
  static std::optional<std::string> compile_error(const std::string& pattern);

 private:
  hs_database* database_ = nullptr;
  hs_scratch* scratch_ = nullptr;
};

// SQL-injection signatures over a decoded URL: tautologies (' or '1'='1), UNION SELECT, stacked statements, comment
// terminators after a quote, and time-based probes (sleep(), benchmark()).
const std::vector<std::string>& sql_injection_patterns();

}  // namespace tandem
