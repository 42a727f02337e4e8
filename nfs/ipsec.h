// ipsec: ESP-style payload encryption with AES-GCM through OpenSSL's libcrypto: the heavy NF of Bubble's
// evaluation. The L4 payload is encrypted in place, the L4 header is authenticated, the 16-byte tag appended.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <rte_mbuf.h>

struct evp_cipher_ctx_st;

namespace tandem {

inline constexpr size_t kGcmTagBytes = 16;
inline constexpr size_t kGcmIvBytes = 12;

// One security association: key, salt and a per-packet sequence number that makes every IV unique, as ESP's.
class GcmSealer {
 public:
  explicit GcmSealer(const std::vector<uint8_t>& key);
  ~GcmSealer();
  GcmSealer(const GcmSealer&) = delete;
  GcmSealer& operator=(const GcmSealer&) = delete;

  // Encrypts the L4 payload of `m` in place and appends the tag; updates the IPv4 and UDP lengths and the
  // IPv4 checksum. Returns false (packet untouched) when it is not IPv4 UDP/TCP or has no room for the tag.
  bool seal(rte_mbuf* m);
  uint64_t sequence() const { return sequence_; }
  // The IV the packet with sequence number `sequence` was sealed with (for decrypting in tests).
  void iv_for(uint64_t sequence, uint8_t iv[kGcmIvBytes]) const;

 private:
  evp_cipher_ctx_st* context_;
  uint8_t salt_[4];
  uint64_t sequence_ = 0;
};

}  // namespace tandem
