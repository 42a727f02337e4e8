// The trailer a frame carries across a wire port (a link to another Tandem node, e.g. a VXLAN): the link's sequence
// number and the sender's clock, after the frame's last byte, in network byte order (the two ends are different
// machines).
#pragma once

#include <cstdint>
#include <optional>

#include <rte_mbuf.h>

namespace tandem {

// The trailer's last two bytes; a frame that ends otherwise is foreign (the kernel's own chatter on the link).
inline constexpr uint16_t kLinkTrailerMagic = 0x7d57;
inline constexpr uint8_t kLinkTrailerVersion = 1;
// seq (8), sent_ns (8), version (1), reserved (1), magic (2).
inline constexpr uint16_t kLinkTrailerBytes = 20;

struct LinkTrailer {
  uint64_t seq = 0;      // the sending port's count of frames it sent before this one
  uint64_t sent_ns = 0;  // CLOCK_REALTIME on the sender as the frame left
};

// Appends the trailer to a single-segment frame; false (the frame untouched) if it has no tailroom for it.
bool append_link_trailer(rte_mbuf* m, const LinkTrailer& trailer);

// Takes the trailer off the end of a received frame, which is trimmed back to what the sender's chain sent; nullopt
// (the frame untouched) if it carries none: too short, another magic, an unknown version, or a chained mbuf.
std::optional<LinkTrailer> take_link_trailer(rte_mbuf* m);

}  // namespace tandem
