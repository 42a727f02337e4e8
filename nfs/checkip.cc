// checkip: validates the IPv4 header (version, length, checksum) or the IPv6 header (version, payload length) and
// drops packets that fail, and frames that are neither.
#include "checkip.h"

#include "dataplane/packets/ip_view.h"
#include "nf.h"

namespace tandem {

bool ipv4_header_valid(const rte_ipv4_hdr* ip, uint32_t l3_len) {
  if ((ip->version_ihl >> 4) != 4) return false;
  uint32_t header_len = (ip->version_ihl & 0x0f) * 4u;
  if (header_len < sizeof(rte_ipv4_hdr) || header_len > l3_len) return false;
  uint32_t total_len = rte_be_to_cpu_16(ip->total_length);
  if (total_len < header_len || total_len > l3_len) return false;
  // The one's complement sum over a header with a correct checksum is 0xffff.
  return rte_raw_cksum(ip, header_len) == 0xffff;
}

bool ipv6_header_valid(const rte_ipv6_hdr* ip, uint32_t l3_len) {
  return (rte_be_to_cpu_32(ip->vtc_flow) >> 28) == 6 &&
         sizeof(rte_ipv6_hdr) + rte_be_to_cpu_16(ip->payload_len) <= l3_len;
}

namespace {

class CheckIp final : public NetworkFunction {
 public:
  void process(Batch& batch) override {
    batch.filter([](rte_mbuf* m) {
      IpInFrame ip = ip_in_frame(m);
      uint32_t available = rte_pktmbuf_data_len(m) - ip.l3_offset;
      if (ip.version == 6) return ipv6_header_valid(ip.ipv6, available);
      return ip.version == 4 && ipv4_header_valid(ip.ipv4, available);
    });
  }
};

const NfRegistration registration({
    .name = "checkip",
    .help = "Validates IPv4 version, header length, total length and header checksum, or IPv6 version and payload "
            "length; drops bad packets and frames that are neither IPv4 nor IPv6.",
    .args = {},
    .create = [](const json&, const NfContext&) { return std::make_unique<CheckIp>(); },
    .descriptor = {.may_drop = true,
                   .reads = FieldSet{HeaderField::EthType} |
                            FieldSet::layer(Layer::L3)},  // the checksum covers every field
});

}  // namespace
}  // namespace tandem
