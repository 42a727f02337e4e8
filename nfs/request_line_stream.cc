// HTTP request lines put back together across TCP segments, per flow.
#include "request_line_stream.h"

#include <cstring>

#include <rte_cycles.h>
#include <rte_hash_crc.h>

namespace tandem {

namespace {

bool is_prefix_of(std::string_view prefix, std::string_view whole) {
  return prefix.size() <= whole.size() && whole.substr(0, prefix.size()) == prefix;
}

}  // namespace

bool could_start_request_line(std::string_view bytes) {
  if (bytes.empty()) return false;
  // No control byte (a server refuses one in a request line), but for the first half of its end.
  for (size_t i = 0; i < bytes.size(); i++) {
    auto byte = static_cast<unsigned char>(bytes[i]);
    if ((byte < 0x20 || byte == 0x7f) && !(byte == '\r' && i + 1 == bytes.size())) return false;
  }
  size_t first = bytes.find(' ');
  std::string_view method = bytes.substr(0, first);
  bool method_fits = false;
  for (std::string_view known : kHttpMethods)
    method_fits = method_fits || (first == std::string_view::npos ? is_prefix_of(method, known) : method == known);
  if (!method_fits || first == std::string_view::npos) return method_fits;
  size_t second = bytes.find(' ', first + 1);
  if (second == std::string_view::npos) return true;  // the URL so far
  if (second == first + 1) return false;              // no URL
  std::string_view version = bytes.substr(second + 1);
  if (!version.empty() && version.back() == '\r') version.remove_suffix(1);  // its line end, cut in two
  return is_prefix_of(version, "HTTP/1.0") || is_prefix_of(version, "HTTP/1.1");
}

size_t RequestLineStreams::KeyHash::operator()(const Key& key) const {
  uint32_t hash = rte_hash_crc(key.src.data(), key.src.size(), key.version);
  hash = rte_hash_crc(key.dst.data(), key.dst.size(), hash);
  return rte_hash_crc_4byte(static_cast<uint32_t>(key.src_port) << 16 | key.dst_port, hash);
}

RequestLineStreams::RequestLineStreams(size_t max_flows, double idle_seconds)
    : max_flows_(max_flows),
      idle_cycles_(static_cast<uint64_t>(idle_seconds * static_cast<double>(rte_get_tsc_hz()))) {}

bool RequestLineStreams::make_room(uint64_t now_tsc) {
  if (flows_.size() < max_flows_) return true;
  for (auto it = flows_.begin(); it != flows_.end();) {
    if (now_tsc - it->second.last_seen_tsc > idle_cycles_)
      it = flows_.erase(it);
    else
      ++it;
  }
  return flows_.size() < max_flows_;
}

RequestLineStreams::Segment RequestLineStreams::feed(rte_mbuf* m, uint64_t now_tsc) {
  pending_key_.reset();
  std::optional<TcpSegmentView> segment = tcp_segment_of(m);
  if (!segment) return {};
  const IpInFrame& ip = segment->ip;
  const rte_tcp_hdr* tcp = segment->tcp;
  std::string_view payload = segment->payload;
  uint32_t seq = rte_be_to_cpu_32(tcp->sent_seq) + ((tcp->tcp_flags & RTE_TCP_SYN_FLAG) ? 1u : 0u);
  auto length = static_cast<uint32_t>(payload.size());

  Key key;
  key.version = ip.version;
  if (ip.version == 4) {
    std::memcpy(key.src.data(), &ip.ipv4->src_addr, 4);
    std::memcpy(key.dst.data(), &ip.ipv4->dst_addr, 4);
  } else {
    std::memcpy(key.src.data(), &ip.ipv6->src_addr, 16);
    std::memcpy(key.dst.data(), &ip.ipv6->dst_addr, 16);
  }
  key.src_port = tcp->src_port;
  key.dst_port = tcp->dst_port;

  auto found = flows_.empty() ? flows_.end() : flows_.find(key);
  if (found != flows_.end() && (tcp->tcp_flags & (RTE_TCP_SYN_FLAG | RTE_TCP_RST_FLAG))) {
    flows_.erase(found);  // a new connection on the same ports, or the end of this one
    found = flows_.end();
  }
  if (found != flows_.end()) {
    Flow& flow = found->second;
    flow.last_seen_tsc = now_tsc;
    auto ahead = static_cast<int32_t>(seq - flow.next_seq);  // sequence numbers wrap: compared as a difference
    if (flow.done) {
      if (ahead < 0 && length > 0) return {.verdict = Verdict::kRetransmitted};
      flows_.erase(found);  // the client moved past the line: the flow is like any other again
    } else {
      if (length == 0) {
        if (tcp->tcp_flags & RTE_TCP_FIN_FLAG) flows_.erase(found);
        return {};
      }
      if (ahead > 0) return {.verdict = Verdict::kOutOfOrder};
      auto taken = static_cast<uint32_t>(-ahead);
      if (taken >= length) return {.verdict = Verdict::kRetransmitted};
      std::string_view fresh = payload.substr(taken);
      joined_.assign(flow.line).append(fresh);
      if (std::optional<HttpRequestLine> line = parse_request_line(joined_)) {
        pending_key_ = key;
        pending_next_seq_ = flow.next_seq + static_cast<uint32_t>(fresh.size());
        return {.verdict = Verdict::kComplete, .line = line, .spanned = true};
      }
      if (!could_start_request_line(joined_)) {
        flows_.erase(found);  // not a request line after all, as the server will find too
        return {};
      }
      if (joined_.size() > kMaxLine) return {.verdict = Verdict::kTooLong};
      flow.line.swap(joined_);
      flow.next_seq += static_cast<uint32_t>(fresh.size());
      return {.verdict = Verdict::kPartial};
    }
  }
  if (length == 0) return {};
  if (std::optional<HttpRequestLine> line = parse_request_line(payload))
    return {.verdict = Verdict::kComplete, .line = line};  // whole in one segment, as nearly every client sends it
  if (!could_start_request_line(payload)) return {};
  if (payload.size() > kMaxLine) return {.verdict = Verdict::kTooLong};
  if (!make_room(now_tsc)) return {.verdict = Verdict::kTableFull};
  flows_.emplace(key, Flow{.line = std::string(payload), .next_seq = seq + length, .last_seen_tsc = now_tsc});
  return {.verdict = Verdict::kPartial};
}

void RequestLineStreams::take_line() {
  if (!pending_key_) return;
  auto found = flows_.find(*pending_key_);
  pending_key_.reset();
  if (found == flows_.end()) return;
  found->second.line.clear();
  found->second.next_seq = pending_next_seq_;
  found->second.done = true;
}

}  // namespace tandem
