// libFuzzer target: a stream of attacker-chosen frames arriving on a wire port, under ASan and UBSan. Each comes off
// the wire whole or with exactly the trailer taken off, every frame is counted once, and the report stays
// writable; a frame the sender stamps comes back as it was.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "contract/packet_meta.h"
#include "dataplane/ports/wire/link_trailer.h"
#include "dataplane/ports/wire/wire_link.h"
#include "fuzz_eal.h"

using namespace tandem;

namespace {
rte_mempool* pool = nullptr;

rte_mbuf* frame_of(const uint8_t* data, uint16_t length) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (m == nullptr) abort();
  memcpy(rte_pktmbuf_append(m, length), data, length);
  return m;
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  pool = start_eal_with_a_pool();
  return 0;
}

// The input: frames, each a two-byte length (big-endian) and its bytes, the last one cut where the input ends.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  WireLink receiver;
  uint64_t frames = 0;
  size_t at = 0;
  while (at + 2 <= size) {
    size_t length = std::min<size_t>((data[at] << 8 | data[at + 1]) % RTE_MBUF_DEFAULT_DATAROOM, size - at - 2);
    at += 2;
    rte_mbuf* m = frame_of(data + at, static_cast<uint16_t>(length));
    std::vector<uint8_t> before(data + at, data + at + length);
    receiver.take(&m, 1, length);  // the frame's length as the clock: any value, early or late
    frames++;
    uint16_t after = rte_pktmbuf_data_len(m);
    if (after != length && after + kLinkTrailerBytes != length) abort();
    if (!std::equal(before.begin(), before.begin() + after, rte_pktmbuf_mtod(m, uint8_t*))) abort();
    // Whatever came, a frame stamped here comes back as it was.
    if (after + kLinkTrailerBytes <= RTE_MBUF_DEFAULT_DATAROOM) {
      std::vector<uint8_t> frame(rte_pktmbuf_mtod(m, uint8_t*), rte_pktmbuf_mtod(m, uint8_t*) + after);
      if (!append_link_trailer(m, {frames, length})) abort();
      std::optional<LinkTrailer> back = take_link_trailer(m);
      if (!back || back->seq != frames || back->sent_ns != length) abort();
      if (rte_pktmbuf_data_len(m) != after || !std::equal(frame.begin(), frame.end(), rte_pktmbuf_mtod(m, uint8_t*)))
        abort();
    }
    rte_pktmbuf_free(m);
    at += length;
  }
  json report = receiver.report();
  const WireSequence& seen = receiver.sequence();
  uint64_t counted = seen.received() + seen.duplicates() + seen.implausible() + report["foreign"].get<uint64_t>();
  if (counted != frames) abort();
  (void)report.dump();
  return 0;
}
