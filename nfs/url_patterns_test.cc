// Tests of the URL signatures: known SQL-injection URLs are caught, ordinary URLs that share words with them are not.
#include "url_patterns.h"

#include <gtest/gtest.h>

#include "http_request.h"

namespace tandem {
namespace {

bool flagged(UrlPatterns& patterns, const std::string& url) {
  std::string decoded;
  decode_url(url, decoded);
  return patterns.first_match(decoded).has_value();
}

TEST(UrlPatterns, CatchesKnownSqlInjections) {
  UrlPatterns patterns(sql_injection_patterns());
  for (const char* url :
       {"/item?id=1%27%20OR%20%271%27%3D%271", "/p?id=1'+or+1=1", "/search?q=x'+UNION+SELECT+user,pass+FROM+users--",
        "/p?id=1+UnIoN/**/SeLeCt+1,2", "/p?id=1;+DROP+TABLE+users", "/login?user=admin'--", "/login?user=admin'%23",
        "/p?id=1+AND+SLEEP(5)", "/p?id=benchmark(1000000,md5(1))"})
    EXPECT_TRUE(flagged(patterns, url)) << url;
}

TEST(UrlPatterns, PassesOrdinaryUrlsThatShareWordsWithAttacks) {
  UrlPatterns patterns(sql_injection_patterns());
  for (const char* url :
       {"/index.html", "/search?q=union+station+schedule", "/books/o'reilly-guide", "/select-your-plan", "/sleep-tips",
        "/products?sort=price&order=desc", "/faq#section-2", "/a;b/c", "/q?x=or+and+union"})
    EXPECT_FALSE(flagged(patterns, url)) << url;
}

TEST(UrlPatterns, ReportsWhichPatternMatchedAndRefusesBadPatterns) {
  UrlPatterns patterns({"^/admin", "\\.php$"});
  EXPECT_EQ(patterns.first_match("/ADMIN/users"), 0u);  // case-insensitive
  EXPECT_EQ(patterns.first_match("/x/index.php"), 1u);
  EXPECT_FALSE(patterns.first_match("/public"));
  EXPECT_TRUE(UrlPatterns::compile_error("(unclosed"));
  EXPECT_TRUE(UrlPatterns::compile_error("(a)\\1"));  // back-references: not in Hyperscan
  EXPECT_FALSE(UrlPatterns::compile_error("union\\s+select"));
  EXPECT_THROW(UrlPatterns({"ok", "(bad"}), std::invalid_argument);
}

}  // namespace
}  // namespace tandem
