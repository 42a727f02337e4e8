// The request line of an HTTP request carried at the start of a TCP segment: its method and URL, and URL decoding.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "dataplane/packets/ip_view.h"

namespace tandem {

// The methods a request line may start with (RFC 9110's, and PATCH).
inline constexpr std::array<std::string_view, 9> kHttpMethods = {"GET",     "POST",  "PUT",     "DELETE", "HEAD",
                                                                 "OPTIONS", "PATCH", "CONNECT", "TRACE"};

struct HttpRequestLine {
  std::string_view method;
  std::string_view url;  // as sent (percent-encoded)
};

// Parses "METHOD SP URL SP HTTP/1.x CRLF" at the start of `payload`; nothing when it is not a complete request line.
std::optional<HttpRequestLine> parse_request_line(std::string_view payload);

// A TCP segment in a frame (Ethernet, IPv4 or IPv6): where its IP packet is, its header, and its payload (a view into
// the mbuf's data, empty if it has none).
struct TcpSegmentView {
  IpInFrame ip;
  const rte_tcp_hdr* tcp;
  std::string_view payload;
};

// Nothing for a frame that holds no whole TCP header: not TCP, truncated, or a later fragment (no TCP header: only
// reassembly would give its bytes a place in the stream).
std::optional<TcpSegmentView> tcp_segment_of(rte_mbuf* m);

// The request line of the frame in `m` (Ethernet, IPv4 or IPv6, TCP); views into the mbuf's data.
std::optional<HttpRequestLine> http_request_line(rte_mbuf* m);

// `url` with %XX escapes and '+' decoded, as a server would see it: what attack signatures are written against.
// A malformed escape is kept as it is.
void decode_url(std::string_view url, std::string& out);

}  // namespace tandem
