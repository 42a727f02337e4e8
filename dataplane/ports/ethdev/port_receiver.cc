// Sorting received frames by chain: the IP view, the chains' source prefixes, and the unhandled frames' policy.
#include "port_receiver.h"

#include <arpa/inet.h>

#include <cstring>
#include <stdexcept>

#include "dataplane/packets/ip_view.h"

namespace tandem {

namespace {
// ICMPv6's neighbour discovery (router solicitation and advertisement, neighbour solicitation and advertisement,
// redirect): IPv6's ARP, which the hosts on either side need as they need ARP, whatever the chains do to IP.
bool neighbour_discovery(rte_mbuf* frame, const IpInFrame& ip) {
  if (ip.version != 6 || ip.l4_protocol != IPPROTO_ICMPV6 || ip.l4_offset == 0 || ip.l4_offset >= ip.l3_end)
    return false;
  uint8_t type = rte_pktmbuf_mtod(frame, const uint8_t*)[ip.l4_offset];
  return type >= 133 && type <= 137;
}
}  // namespace

SourcePrefix::SourcePrefix(const std::string& text) {
  size_t slash = text.find('/');
  std::string address = text.substr(0, slash);
  version_ = address.find(':') == std::string::npos ? 4 : 6;
  unsigned bits = version_ == 4 ? 32 : 128;
  length_ = bits;
  if (slash != std::string::npos) {
    std::string length = text.substr(slash + 1);
    if (length.empty() || length.size() > 3 || length.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(length) > bits)
      throw std::invalid_argument("not an IP prefix: " + text);
    length_ = static_cast<unsigned>(std::stoul(length));
  }
  if (inet_pton(version_ == 4 ? AF_INET : AF_INET6, address.c_str(), bytes_.data()) != 1)
    throw std::invalid_argument("not an IP prefix: " + text);
}

bool SourcePrefix::contains(uint8_t version, const uint8_t* address) const {
  if (version != version_) return false;
  unsigned whole = length_ / 8, rest = length_ % 8;
  if (std::memcmp(address, bytes_.data(), whole) != 0) return false;
  if (rest == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (address[whole] & mask) == (bytes_[whole] & mask);
}

int PortReceiver::route_of(rte_mbuf* frame) const {
  IpInFrame ip = ip_in_frame(frame);
  if (ip.version == 0 || neighbour_discovery(frame, ip)) return -1;
  const uint8_t* source = ip.version == 4 ? reinterpret_cast<const uint8_t*>(&ip.ipv4->src_addr)
                                          : reinterpret_cast<const uint8_t*>(&ip.ipv6->src_addr);
  for (size_t r = 0; r < routes_.size(); r++) {
    if (routes_[r].sources.empty()) return static_cast<int>(r);
    for (const SourcePrefix& prefix : routes_[r].sources)
      if (prefix.contains(ip.version, source)) return static_cast<int>(r);
  }
  return -1;
}

void PortReceiver::add_route(Route route) {
  routes_.push_back(std::move(route));
  by_route_.emplace_back();
  by_route_count_.push_back(0);
}

void PortReceiver::close_route(int chain) {
  for (Route& route : routes_)
    if (route.chain == chain) route.closed = true;
}

void PortReceiver::sort(rte_mbuf** pkts, uint16_t count) {
  std::fill(by_route_count_.begin(), by_route_count_.end(), 0);
  unhandled_count_ = 0;
  for (uint16_t i = 0; i < count; i++) {
    int route = route_of(pkts[i]);
    if (route < 0)
      unhandled_[unhandled_count_++] = pkts[i];
    else
      by_route_[route][by_route_count_[route]++] = pkts[i];
  }
}

void PortReceiver::hand_on_unhandled() {
  if (unhandled_count_ == 0) return;
  PortCounters& counters = port_.counters();
  if (pass_to_ == nullptr) {
    counters.unhandled_dropped += unhandled_count_;
    rte_pktmbuf_free_bulk(unhandled_.data(), unhandled_count_);
    return;
  }
  // Counted as passed here; what the other port then refuses is its tx_refused.
  counters.passed += unhandled_count_;
  pass_to_->transmit(unhandled_.data(), unhandled_count_);
}

}  // namespace tandem
