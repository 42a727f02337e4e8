// Hyperscan's compile and block-mode scan behind UrlPatterns, and the built-in SQL-injection signatures.
#include "url_patterns.h"

#include <hs/hs.h>

#include <stdexcept>

namespace tandem {

namespace {

constexpr unsigned kFlags = HS_FLAG_CASELESS | HS_FLAG_DOTALL | HS_FLAG_SINGLEMATCH;

}  // namespace

UrlPatterns::UrlPatterns(const std::vector<std::string>& patterns) {
  std::vector<const char*> expressions;
  std::vector<unsigned> flags(patterns.size(), kFlags), ids;
  for (size_t i = 0; i < patterns.size(); i++) {
    expressions.push_back(patterns[i].c_str());
    ids.push_back(static_cast<unsigned>(i));
  }
  hs_compile_error_t* error = nullptr;
  if (hs_compile_multi(expressions.data(), flags.data(), ids.data(), static_cast<unsigned>(patterns.size()),
                       HS_MODE_BLOCK, nullptr, &database_, &error) != HS_SUCCESS) {
    std::string what = error ? error->message : "unknown error";
    int which = error ? error->expression : -1;
    hs_free_compile_error(error);
    throw std::invalid_argument(which >= 0 ? "pattern " + std::to_string(which) + " (" + patterns[which] + "): " + what
                                           : what);
  }
  if (hs_alloc_scratch(database_, &scratch_) != HS_SUCCESS) {
    hs_free_database(database_);
    throw std::runtime_error("Hyperscan could not allocate its scratch space");
  }
}

UrlPatterns::~UrlPatterns() {
  hs_free_scratch(scratch_);
  hs_free_database(database_);
}

std::optional<size_t> UrlPatterns::first_match(std::string_view text) {
  std::optional<size_t> found;
  auto on_match = [](unsigned id, unsigned long long, unsigned long long, unsigned, void* context) -> int {
    *static_cast<std::optional<size_t>*>(context) = id;
    return 1;  // one match decides: stop scanning
  };
  hs_error_t status =
      hs_scan(database_, text.data(), static_cast<unsigned>(text.size()), 0, scratch_, on_match, &found);
  if (status != HS_SUCCESS && status != HS_SCAN_TERMINATED)
    throw std::runtime_error("Hyperscan scan failed: " + std::to_string(status));
  return found;
}

std::optional<std::string> UrlPatterns::compile_error(const std::string& pattern) {
  hs_database_t* database = nullptr;
  hs_compile_error_t* error = nullptr;
  if (hs_compile(pattern.c_str(), kFlags, HS_MODE_BLOCK, nullptr, &database, &error) == HS_SUCCESS) {
    hs_free_database(database);
    return std::nullopt;
  }
  std::string what = error ? error->message : "unknown error";
  hs_free_compile_error(error);
  return what;
}

const std::vector<std::string>& sql_injection_patterns() {
  static const std::vector<std::string> patterns = {
      R"('\s*(or|and)\s+'?\w+'?\s*(=|like)\s*'?\w+)",          // ' or '1'='1, ' and 1=1
      R"(\bunion\b(\s|/\*.*?\*/)+(all\s+)?select\b)",          // union select
      R"(;\s*(drop|delete|insert|update|shutdown|exec)\b)",    // stacked statements
      R"('\s*(--|#|/\*))",                                     // a quote closed, the rest commented out
      R"(\b(sleep|benchmark|pg_sleep|waitfor\s+delay)\s*\()",  // time-based probes
  };
  return patterns;
}

}  // namespace tandem
