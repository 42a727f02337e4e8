// ttl: decrements the IPv4 TTL with an incremental checksum update (RFC 1624) and drops at zero.
#include "ttl.h"

#include "dataplane/packets/ipv4_view.h"
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

namespace {

class Ttl final : public NetworkFunction {
 public:
  void process(Batch& batch) override {
    batch.filter([](rte_mbuf* m) {
      rte_ipv4_hdr* ip = ipv4_header(m);
      return ip != nullptr && decrement_ttl(ip);
    });
  }
};

const NfRegistration registration({
    .name = "ttl",
    .help = "Decrements the IPv4 TTL (incremental checksum update); drops packets whose TTL reaches 0.",
    .args = {},
    .create = [](const json&, const NfContext&) { return std::make_unique<Ttl>(); },
    .descriptor = {.may_drop = true,
                   .reads = {HeaderField::EthType, HeaderField::Ipv4Ttl, HeaderField::Ipv4Checksum},
                   .writes = {HeaderField::Ipv4Ttl, HeaderField::Ipv4Checksum}},
});

}  // namespace
}  // namespace tandem
