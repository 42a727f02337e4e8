// Tests of the ipsec NF: what it seals decrypts back to the original payload with a valid tag.
#include "ipsec.h"

#include <openssl/evp.h>

#include <rte_ip.h>
#include <rte_udp.h>

#include "nf_test_support.h"

namespace tandem {
namespace {

const std::vector<uint8_t> kKey = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
constexpr size_t kL4 = sizeof(rte_ether_hdr) + sizeof(rte_ipv4_hdr);
constexpr size_t kPayload = kL4 + sizeof(rte_udp_hdr);

// Decrypts in a copy; returns true when the tag verifies.
bool opens(const GcmSealer& sealer, uint64_t sequence, const uint8_t* frame, size_t payload_bytes,
           std::vector<uint8_t>& plain) {
  uint8_t iv[kGcmIvBytes];
  sealer.iv_for(sequence, iv);
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int n = 0;
  plain.resize(payload_bytes);
  std::vector<uint8_t> tag(frame + kPayload + payload_bytes, frame + kPayload + payload_bytes + kGcmTagBytes);
  bool ok = EVP_DecryptInit_ex(ctx, EVP_aes_128_gcm(), nullptr, nullptr, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, kGcmIvBytes, nullptr) == 1 &&
            EVP_DecryptInit_ex(ctx, nullptr, nullptr, kKey.data(), iv) == 1 &&
            EVP_DecryptUpdate(ctx, nullptr, &n, frame + kL4, sizeof(rte_udp_hdr)) == 1 &&
            EVP_DecryptUpdate(ctx, plain.data(), &n, frame + kPayload, static_cast<int>(payload_bytes)) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, kGcmTagBytes, tag.data()) == 1 &&
            EVP_DecryptFinal_ex(ctx, plain.data() + n, &n) == 1;
  EVP_CIPHER_CTX_free(ctx);
  return ok;
}

TEST(Ipsec, SealedPayloadDecryptsBackWithAValidTag) {
  GcmSealer sealer(kKey);
  rte_mbuf* m = testing::make_frame(7, 128);
  uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(data + sizeof(rte_ether_hdr));
  size_t payload_bytes = rte_be_to_cpu_16(ip->total_length) - sizeof(rte_ipv4_hdr) - sizeof(rte_udp_hdr);
  for (size_t i = 0; i < payload_bytes; i++) data[kPayload + i] = static_cast<uint8_t>(i * 7);
  std::vector<uint8_t> original(data + kPayload, data + kPayload + payload_bytes);
  uint16_t length_before = rte_be_to_cpu_16(ip->total_length);

  ASSERT_TRUE(sealer.seal(m));
  EXPECT_NE(std::vector<uint8_t>(data + kPayload, data + kPayload + payload_bytes), original);  // it is ciphertext
  EXPECT_EQ(rte_be_to_cpu_16(ip->total_length), length_before + kGcmTagBytes);
  uint16_t stored = ip->hdr_checksum;
  ip->hdr_checksum = 0;
  EXPECT_EQ(rte_ipv4_cksum(ip), stored);
  ip->hdr_checksum = stored;

  std::vector<uint8_t> plain;
  ASSERT_TRUE(opens(sealer, 0, data, payload_bytes, plain));
  EXPECT_EQ(plain, original);
  data[kPayload] ^= 1;  // a flipped bit fails authentication
  EXPECT_FALSE(opens(sealer, 0, data, payload_bytes, plain));
  rte_pktmbuf_free(m);
}

TEST(Ipsec, EveryPacketGetsItsOwnIv) {
  GcmSealer sealer(kKey);
  rte_mbuf* a = testing::make_frame(1, 64);
  rte_mbuf* b = testing::make_frame(1, 64);  // identical plaintext
  ASSERT_TRUE(sealer.seal(a));
  ASSERT_TRUE(sealer.seal(b));
  EXPECT_NE(memcmp(rte_pktmbuf_mtod_offset(a, uint8_t*, kPayload), rte_pktmbuf_mtod_offset(b, uint8_t*, kPayload), 8),
            0);
  EXPECT_EQ(sealer.sequence(), 2u);
  rte_pktmbuf_free(a);
  rte_pktmbuf_free(b);
}

TEST(Ipsec, NonIpPacketsAreDropped) {
  auto nf = testing::make_nf("ipsec");
  rte_mbuf* m = testing::make_frame(3);
  rte_pktmbuf_mtod(m, rte_ether_hdr*)->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
  testing::BatchOutcome out = testing::run_batch(*nf, {m, testing::make_frame(4)});
  EXPECT_EQ(out.kept.size(), 1u);
  EXPECT_EQ(out.dropped, 1);
  testing::free_all(out.kept);
}

}  // namespace
}  // namespace tandem
