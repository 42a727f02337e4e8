// The request line of an HTTP request carried at the start of a TCP segment: its method and URL, and URL decoding.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <rte_mbuf.h>

namespace tandem {

struct HttpRequestLine {
  std::string_view method;
  std::string_view url;  // as sent (percent-encoded)
};

// Parses "METHOD SP URL SP HTTP/1.x CRLF" at the start of `payload`; nothing when it is not a complete request line.
std::optional<HttpRequestLine> parse_request_line(std::string_view payload);

// The request line of the frame in `m` (Ethernet, IPv4, TCP); views into the mbuf's data.
std::optional<HttpRequestLine> http_request_line(rte_mbuf* m);

// `url` with %XX escapes and '+' decoded, as a server would see it: what attack signatures are written against.
// A malformed escape is kept as it is.
void decode_url(std::string_view url, std::string& out);

}  // namespace tandem
