// A packet's record (contract/packet_meta.h) carried inside the frame, as a trailer after its last byte, where it
// crosses a kernel link: a socket or a veth carries bytes, not the mbuf's private area.
#pragma once

#include <cstdint>

#include <rte_mbuf.h>

#include "packet_meta.h"

namespace tandem {

// The trailer's last two bytes, which tell a frame that carries one from a foreign frame (IPv6 chatter, ARP).
inline constexpr uint16_t kWireMetaMagic = 0x7d4e;
// Fixed part: seq, tx_tsc, trace_slot, chain, hop_count, then the hops, then their number and the magic.
inline constexpr uint16_t kWireMetaFixedBytes = 8 + 8 + 4 + 2 + 1 + 1 + 2;

// The trailer's size for a record with `hop_count` hops (kernel chains are lines: only the ordered hops travel).
inline uint16_t wire_meta_bytes(uint8_t hop_count) {
  return static_cast<uint16_t>(kWireMetaFixedBytes + (hop_count < kMaxHops ? hop_count : kMaxHops));
}

// Appends the packet's record to its frame (a single-segment mbuf); false if the mbuf has no tailroom left.
bool append_wire_meta(rte_mbuf* m);

// Takes the record off the end of a received frame into the mbuf's private area and trims the frame back to
// what the NFs saw; false (the mbuf untouched) if the frame carries none.
bool take_wire_meta(rte_mbuf* m);

}  // namespace tandem
