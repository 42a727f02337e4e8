// ttl: decrements the IPv4 TTL with an incremental checksum update (RFC 1624), or the IPv6 hop limit, and drops at
// zero.
#include "ttl.h"

#include "dataplane/packets/ip_view.h"
#include "nf.h"

namespace tandem {

bool decrement_ttl(rte_ipv4_hdr* ip) {
  if (ip->time_to_live <= 1) return false;
  ip->time_to_live--;
  // TTL is the high byte of a 16-bit word: the word drops by 0x0100, so by RFC 1624 eq. 3
  // HC' = ~(~HC + ~m + m') = ~(~HC + 0xfeff) in one's complement arithmetic.
  uint32_t sum = static_cast<uint16_t>(~rte_be_to_cpu_16(ip->hdr_checksum)) + 0xfeffu;
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  ip->hdr_checksum = rte_cpu_to_be_16(static_cast<uint16_t>(~sum));
  return true;
}

bool decrement_hop_limit(rte_ipv6_hdr* ip) {
  if (ip->hop_limits <= 1) return false;
  ip->hop_limits--;  // IPv6 has no header checksum to update
  return true;
}

namespace {

class Ttl final : public NetworkFunction {
 public:
  void process(Batch& batch) override {
    batch.filter([](rte_mbuf* m) {
      IpInFrame ip = ip_in_frame(m);
      if (ip.version == 6) return decrement_hop_limit(ip.ipv6);
      return ip.version == 4 && decrement_ttl(ip.ipv4);
    });
  }
};

const NfRegistration registration({
    .name = "ttl",
    .help = "Decrements the IPv4 TTL (incremental checksum update) or the IPv6 hop limit; drops packets whose TTL or "
            "hop limit reaches 0, and frames that are neither IPv4 nor IPv6.",
    .args = {},
    .create = [](const json&, const NfContext&) { return std::make_unique<Ttl>(); },
    // ipv4_ttl stands for IPv6's hop limit too: the same field to the composer.
    .descriptor = {.may_drop = true,
                   .reads = {HeaderField::EthType, HeaderField::Ipv4Ttl, HeaderField::Ipv4Checksum},
                   .writes = {HeaderField::Ipv4Ttl, HeaderField::Ipv4Checksum}},
});

}  // namespace
}  // namespace tandem
