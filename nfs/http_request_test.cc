// Tests of HTTP request-line parsing and URL decoding, on frames and on raw payloads.
#include "http_request.h"

#include "nf_test_support.h"

namespace tandem {
namespace {

TEST(HttpRequest, ParsesTheRequestLineAndNothingElse) {
  auto line = parse_request_line("GET /a/b?c=d HTTP/1.1\r\nHost: example.com\r\n\r\n");
  ASSERT_TRUE(line);
  EXPECT_EQ(line->method, "GET");
  EXPECT_EQ(line->url, "/a/b?c=d");
  EXPECT_TRUE(parse_request_line("POST /form HTTP/1.0\r\n"));
  EXPECT_FALSE(parse_request_line("GET /no-line-end HTTP/1.1"));      // cut off: not a whole request line
  EXPECT_FALSE(parse_request_line("FETCH /x HTTP/1.1\r\n"));          // not a method
  EXPECT_FALSE(parse_request_line("GET  HTTP/1.1\r\n"));              // no URL
  EXPECT_FALSE(parse_request_line("GET /x SPDY/3\r\n"));              // not HTTP/1.x
  EXPECT_FALSE(parse_request_line("HTTP/1.1 200 OK\r\n"));            // a response
  EXPECT_FALSE(parse_request_line(std::string_view("\0\0\0\0", 4)));  // the generator's zero payload
}

TEST(HttpRequest, FindsTheRequestInATcpFrameOnly) {
  rte_mbuf* http = testing::make_tcp_frame_with("GET /index.html HTTP/1.1\r\nHost: h\r\n\r\n");
  auto line = http_request_line(http);
  ASSERT_TRUE(line);
  EXPECT_EQ(line->url, "/index.html");
  rte_mbuf* udp = testing::make_frame(1, 128, IPPROTO_UDP);
  rte_mbuf* empty_tcp = testing::make_frame(1, 64, IPPROTO_TCP);
  EXPECT_FALSE(http_request_line(udp));
  EXPECT_FALSE(http_request_line(empty_tcp));
  testing::free_all({http, udp, empty_tcp});
}

TEST(HttpRequest, DecodesEscapesAndPlusButKeepsMalformedOnes) {
  std::string out;
  decode_url("/p?id=1%27%20OR%20%271%27%3D%271", out);
  EXPECT_EQ(out, "/p?id=1' OR '1'='1");
  decode_url("/q?a+b=%7e%zz%4", out);
  EXPECT_EQ(out, "/q?a b=~%zz%4");
}

}  // namespace
}  // namespace tandem
