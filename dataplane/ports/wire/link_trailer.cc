// Writing and reading the wire trailer in network byte order.
#include "link_trailer.h"

#include <rte_byteorder.h>

#include <cstring>

namespace tandem {

namespace {

uint8_t* put64(uint8_t* at, uint64_t value) {
  value = rte_cpu_to_be_64(value);
  memcpy(at, &value, 8);
  return at + 8;
}

uint64_t get64(const uint8_t* at) {
  uint64_t value;
  memcpy(&value, at, 8);
  return rte_be_to_cpu_64(value);
}

}  // namespace

bool append_link_trailer(rte_mbuf* m, const LinkTrailer& trailer) {
  if (m->nb_segs != 1) return false;
  auto* at = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, kLinkTrailerBytes));
  if (at == nullptr) return false;
  at = put64(at, trailer.seq);
  at = put64(at, trailer.sent_ns);
  *at++ = kLinkTrailerVersion;
  *at++ = 0;
  uint16_t magic = rte_cpu_to_be_16(kLinkTrailerMagic);
  memcpy(at, &magic, 2);
  return true;
}

std::optional<LinkTrailer> take_link_trailer(rte_mbuf* m) {
  // A chained frame (more than one segment) never comes from a sender that appends to single segments.
  if (m->nb_segs != 1 || rte_pktmbuf_data_len(m) < kLinkTrailerBytes) return std::nullopt;
  const uint8_t* end = rte_pktmbuf_mtod(m, const uint8_t*) + rte_pktmbuf_data_len(m);
  uint16_t magic;
  memcpy(&magic, end - 2, 2);
  if (rte_be_to_cpu_16(magic) != kLinkTrailerMagic || end[-4] != kLinkTrailerVersion) return std::nullopt;
  const uint8_t* at = end - kLinkTrailerBytes;
  LinkTrailer trailer{get64(at), get64(at + 8)};
  rte_pktmbuf_trim(m, kLinkTrailerBytes);
  return trailer;
}

}  // namespace tandem
