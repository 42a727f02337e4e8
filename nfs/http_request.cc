// Parsing HTTP request lines out of TCP payloads, and URL decoding.
#include "http_request.h"

#include <array>

#include <rte_ip.h>

namespace tandem {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<HttpRequestLine> parse_request_line(std::string_view payload) {
  size_t end = payload.find("\r\n");
  if (end == std::string_view::npos) return std::nullopt;
  std::string_view line = payload.substr(0, end);
  size_t first = line.find(' ');
  if (first == std::string_view::npos) return std::nullopt;
  std::string_view method = line.substr(0, first);
  bool known = false;
  for (std::string_view m : kHttpMethods) known = known || m == method;
  if (!known) return std::nullopt;
  size_t second = line.find(' ', first + 1);
  if (second == std::string_view::npos || second == first + 1) return std::nullopt;
  std::string_view version = line.substr(second + 1);
  if (version != "HTTP/1.0" && version != "HTTP/1.1") return std::nullopt;
  return HttpRequestLine{method, line.substr(first + 1, second - first - 1)};
}

std::optional<TcpSegmentView> tcp_segment_of(rte_mbuf* m) {
  IpInFrame ip = ip_in_frame(m);
  if (ip.version == 0 || ip.truncated || ip.l4_protocol != IPPROTO_TCP || ip.l4_offset == 0) return std::nullopt;
  if (ip.l4_offset + sizeof(rte_tcp_hdr) > ip.l3_end) return std::nullopt;
  const auto* tcp = rte_pktmbuf_mtod_offset(m, const rte_tcp_hdr*, ip.l4_offset);
  size_t payload = ip.l4_offset + (tcp->data_off >> 4) * 4u;
  if (payload >= ip.l3_end) return TcpSegmentView{ip, tcp, {}};
  return TcpSegmentView{ip, tcp, {rte_pktmbuf_mtod_offset(m, const char*, payload), ip.l3_end - payload}};
}

std::optional<HttpRequestLine> http_request_line(rte_mbuf* m) {
  std::optional<TcpSegmentView> segment = tcp_segment_of(m);
  if (!segment || segment->payload.empty()) return std::nullopt;
  return parse_request_line(segment->payload);
}

void decode_url(std::string_view url, std::string& out) {
  out.clear();
  for (size_t i = 0; i < url.size(); i++) {
    char c = url[i];
    if (c == '+') {
      out.push_back(' ');
    } else if (c == '%' && i + 2 < url.size() && hex_value(url[i + 1]) >= 0 && hex_value(url[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_value(url[i + 1]) * 16 + hex_value(url[i + 2])));
      i += 2;
    } else {
      out.push_back(c);
    }
  }
}

}  // namespace tandem
