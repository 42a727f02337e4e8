// What an NF does to a packet (μNF's descriptor, one step finer): state, drops, and the header fields it reads and
// writes.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "contract/arg_schema.h"

namespace tandem {

enum class Layer { L2, L3, L4, Payload };

// Header fields of an Ethernet / IPv4 / UDP or TCP frame, as far as NFs tell them apart.
enum class HeaderField : uint8_t {
  EthDst,
  EthSrc,
  EthType,
  Ipv4VersionIhl,
  Ipv4Tos,
  Ipv4TotalLength,
  Ipv4Fragment,  // Fragment: identification, flags and offset
  Ipv4Ttl,
  Ipv4Protocol,
  Ipv4Checksum,
  Ipv4Src,
  Ipv4Dst,
  Ipv4Options,
  L4SrcPort,
  L4DstPort,
  L4Length,
  L4Checksum,
  L4Other,  // L4Length: UDP's length; L4Other: TCP's other fields
  Payload,  // what follows the L4 header, and the frame's length
  Count
};

// A set of header fields.
class FieldSet {
 public:
  FieldSet() = default;
  FieldSet(std::initializer_list<HeaderField> fields) {
    for (HeaderField f : fields) bits_ |= bit(f);
  }
  static FieldSet all() { return FieldSet((1u << static_cast<unsigned>(HeaderField::Count)) - 1); }
  static FieldSet layer(Layer layer);  // every field of one layer

  bool contains(HeaderField f) const { return bits_ & bit(f); }
  bool empty() const { return bits_ == 0; }
  bool intersects(FieldSet other) const { return (bits_ & other.bits_) != 0; }
  bool subset_of(FieldSet other) const { return (bits_ & ~other.bits_) == 0; }
  FieldSet operator|(FieldSet other) const { return FieldSet(bits_ | other.bits_); }
  FieldSet operator&(FieldSet other) const { return FieldSet(bits_ & other.bits_); }
  bool operator==(const FieldSet&) const = default;
  std::vector<std::string> names() const;

 private:
  explicit FieldSet(uint32_t bits) : bits_(bits) {}
  static uint32_t bit(HeaderField f) { return 1u << static_cast<unsigned>(f); }
  uint32_t bits_ = 0;
};

enum class Access { Nop, ReadOnly, ReadWrite };

struct NfDescriptor {
  bool stateful = false;  // keeps per-flow or per-stream state between packets
  bool may_drop = false;
  // Decides by a random draw: what it does to a packet is no function of the packet, its arguments and its state,
  // so two of them in a row are not one (the composer never merges it as redundant).
  bool random = false;
  FieldSet reads;   // fields whose value the NF's decision or output depends on
  FieldSet writes;  // fields it may change (a written field is read too when the NF updates it in place)
  // The names of its output gates (contract/batch.h) when it has several, gate 0 first: the labels a labelled
  // fan-out after it routes by. Empty: one output, every packet on gate 0.
  std::vector<std::string> gates;

  // The paper's per-layer action: NOP, ReadOnly, or ReadWrite.
  Access access(Layer layer) const;
  json to_json() const;
};

// Whether two NFs may process the same packet at the same time, as μNF's parallel groups do: neither drops,
// and neither writes a field the other reads or writes.
bool may_run_in_parallel(const NfDescriptor& a, const NfDescriptor& b);

// The field of a frame's byte at `offset` (Ethernet II, IPv4 with `ip_header_bytes`, then UDP or TCP).
HeaderField field_at(size_t offset, size_t ip_header_bytes, bool tcp);

const char* field_name(HeaderField field);
const char* layer_name(Layer layer);
const char* access_name(Access access);

}  // namespace tandem
