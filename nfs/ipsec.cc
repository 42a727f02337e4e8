// ipsec: AES-GCM sealing of each packet's payload. OpenSSL's libcrypto rather than DPDK's cryptodev: the
// Debian DPDK build has no AES-NI GCM PMD (it needs intel-ipsec-mb), and a cryptodev adds an enqueue/dequeue
// device model to what should be in-line CPU work on a shared core; libcrypto uses AES-NI and PCLMULQDQ.
#include "ipsec.h"

#include <openssl/evp.h>

#include <cstring>
#include <stdexcept>

#include <rte_ip.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "dataplane/packets/ipv4_view.h"
#include "nf.h"

namespace tandem {

GcmSealer::GcmSealer(const std::vector<uint8_t>& key) : context_(EVP_CIPHER_CTX_new()) {
  const EVP_CIPHER* cipher = key.size() == 32 ? EVP_aes_256_gcm() : key.size() == 16 ? EVP_aes_128_gcm() : nullptr;
  if (context_ == nullptr || cipher == nullptr ||
      EVP_EncryptInit_ex(context_, cipher, nullptr, key.data(), nullptr) != 1 ||
      EVP_CIPHER_CTX_ctrl(context_, EVP_CTRL_GCM_SET_IVLEN, kGcmIvBytes, nullptr) != 1)
    throw std::runtime_error("cannot set up AES-GCM in libcrypto");
  memcpy(salt_, key.data(), sizeof salt_);
}

GcmSealer::~GcmSealer() { EVP_CIPHER_CTX_free(context_); }

void GcmSealer::iv_for(uint64_t sequence, uint8_t iv[kGcmIvBytes]) const {
  memcpy(iv, salt_, sizeof salt_);
  memcpy(iv + sizeof salt_, &sequence, sizeof sequence);
}

bool GcmSealer::seal(rte_mbuf* m) {
  auto [ip, l3] = ipv4_in_frame(m);
  if (ip == nullptr || (ip->next_proto_id != IPPROTO_UDP && ip->next_proto_id != IPPROTO_TCP)) return false;
  size_t l4 = l3 + rte_ipv4_hdr_len(ip);
  size_t l4_header = ip->next_proto_id == IPPROTO_UDP ? sizeof(rte_udp_hdr) : sizeof(rte_tcp_hdr);
  size_t frame = rte_pktmbuf_data_len(m), ip_end = l3 + rte_be_to_cpu_16(ip->total_length);
  if (ip_end > frame || l4 + l4_header > ip_end || rte_pktmbuf_tailroom(m) < kGcmTagBytes) return false;
  uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
  uint8_t* payload = data + l4 + l4_header;
  int payload_bytes = static_cast<int>(ip_end - (l4 + l4_header));

  // The tag goes right after the IP payload; Ethernet padding, if any, is overwritten.
  size_t grown = ip_end + kGcmTagBytes;
  if (grown > frame && rte_pktmbuf_append(m, static_cast<uint16_t>(grown - frame)) == nullptr) return false;
  ip->total_length = rte_cpu_to_be_16(static_cast<uint16_t>(rte_be_to_cpu_16(ip->total_length) + kGcmTagBytes));
  if (ip->next_proto_id == IPPROTO_UDP) {
    auto* udp = reinterpret_cast<rte_udp_hdr*>(data + l4);
    udp->dgram_len = rte_cpu_to_be_16(static_cast<uint16_t>(rte_be_to_cpu_16(udp->dgram_len) + kGcmTagBytes));
    udp->dgram_cksum = 0;  // no UDP checksum over ciphertext, as for UDP-encapsulated ESP
  }
  ip->hdr_checksum = 0;
  ip->hdr_checksum = rte_ipv4_cksum(ip);

  uint8_t iv[kGcmIvBytes];
  iv_for(sequence_++, iv);
  int written = 0;
  bool ok =
      EVP_EncryptInit_ex(context_, nullptr, nullptr, nullptr, iv) == 1 &&
      EVP_EncryptUpdate(context_, nullptr, &written, data + l4, static_cast<int>(l4_header)) == 1 &&  // header as AAD
      EVP_EncryptUpdate(context_, payload, &written, payload, payload_bytes) == 1 &&
      EVP_EncryptFinal_ex(context_, payload + written, &written) == 1 &&
      EVP_CIPHER_CTX_ctrl(context_, EVP_CTRL_GCM_GET_TAG, kGcmTagBytes, payload + payload_bytes) == 1;
  if (!ok) throw std::runtime_error("AES-GCM encryption failed in libcrypto");
  return true;
}

namespace {

std::vector<uint8_t> parse_key(const std::string& hex) {
  std::vector<uint8_t> key;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    key.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return key;
}

bool valid_key(const std::string& hex) {
  if (hex.size() != 32 && hex.size() != 64) return false;
  return hex.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
}

class Ipsec final : public NetworkFunction {
 public:
  explicit Ipsec(const std::vector<uint8_t>& key) : sealer_(key) {}
  void process(Batch& batch) override {
    batch.filter([this](rte_mbuf* m) {
      if (sealer_.seal(m)) return true;
      unsealable_++;
      return false;
    });
  }
  json report() const override { return {{"sealed", sealer_.sequence()}, {"dropped_unsealable", unsealable_}}; }

 private:
  GcmSealer sealer_;
  uint64_t unsealable_ = 0;
};

const NfRegistration registration({
    .name = "ipsec",
    .help = "Encrypts each packet's L4 payload with AES-GCM (OpenSSL libcrypto, AES-NI) and appends the 16-byte tag, "
            "ESP-style; drops what is not IPv4 UDP/TCP.",
    .args = {{.name = "key",
              .type = ArgType::String,
              .default_value = "000102030405060708090a0b0c0d0e0f",
              .help = "AES key in hex: 32 digits for AES-128-GCM, 64 for AES-256-GCM"}},
    .check =
        [](const json& args, const std::string& path, SpecErrors& errors) {
          if (!valid_key(args["key"].get<std::string>()))
            errors.push_back({path + ".key", "must be 32 or 64 hexadecimal digits (AES-128 or AES-256)"});
        },
    .create = [](const json& args,
                 const NfContext&) { return std::make_unique<Ipsec>(parse_key(args["key"].get<std::string>())); },
    .descriptor = {.stateful = true,  // the sequence number of its IVs
                   .may_drop = true,
                   .reads = FieldSet{HeaderField::EthType, HeaderField::Ipv4VersionIhl, HeaderField::Ipv4TotalLength,
                                     HeaderField::Ipv4Protocol} |
                            FieldSet::layer(Layer::L4) |
                            FieldSet::layer(Layer::Payload),  // the L4 header is authenticated, the payload sealed
                   .writes = {HeaderField::Ipv4TotalLength, HeaderField::Ipv4Checksum, HeaderField::L4Length,
                              HeaderField::L4Checksum, HeaderField::Payload}},
});

}  // namespace
}  // namespace tandem
