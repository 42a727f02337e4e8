// NF descriptors: field names, per-layer access, the parallel-execution rule, and byte offsets to fields.
#include "descriptor.h"

#include <stdexcept>

namespace tandem {

namespace {

Layer layer_of(HeaderField f) {
  if (f <= HeaderField::EthType) return Layer::L2;
  if (f <= HeaderField::Ipv4Options) return Layer::L3;
  if (f <= HeaderField::L4Other) return Layer::L4;
  return Layer::Payload;
}

constexpr const char* kFieldNames[] = {"eth_dst",       "eth_src",           "eth_type",      "ipv4_version_ihl",
                                       "ipv4_tos",      "ipv4_total_length", "ipv4_fragment", "ipv4_ttl",
                                       "ipv4_protocol", "ipv4_checksum",     "ipv4_src",      "ipv4_dst",
                                       "ipv4_options",  "l4_src_port",       "l4_dst_port",   "l4_length",
                                       "l4_checksum",   "l4_other",          "payload"};
static_assert(std::size(kFieldNames) == static_cast<size_t>(HeaderField::Count));

}  // namespace

const char* field_name(HeaderField field) { return kFieldNames[static_cast<size_t>(field)]; }

const char* layer_name(Layer layer) {
  switch (layer) {
    case Layer::L2:
      return "L2";
    case Layer::L3:
      return "L3";
    case Layer::L4:
      return "L4";
    case Layer::Payload:
      return "payload";
  }
  return "?";
}

const char* access_name(Access access) {
  switch (access) {
    case Access::Nop:
      return "NOP";
    case Access::ReadOnly:
      return "ReadOnly";
    case Access::ReadWrite:
      return "ReadWrite";
  }
  return "?";
}

FieldSet FieldSet::layer(Layer layer) {
  FieldSet set;
  for (unsigned f = 0; f < static_cast<unsigned>(HeaderField::Count); f++)
    if (layer_of(static_cast<HeaderField>(f)) == layer) set.bits_ |= 1u << f;
  return set;
}

std::vector<std::string> FieldSet::names() const {
  std::vector<std::string> out;
  for (unsigned f = 0; f < static_cast<unsigned>(HeaderField::Count); f++)
    if (contains(static_cast<HeaderField>(f))) out.emplace_back(kFieldNames[f]);
  return out;
}

Access NfDescriptor::access(Layer layer) const {
  FieldSet fields = FieldSet::layer(layer);
  if (writes.intersects(fields)) return Access::ReadWrite;
  if (reads.intersects(fields)) return Access::ReadOnly;
  return Access::Nop;
}

json NfDescriptor::to_json() const {
  json layers = json::object();
  for (Layer layer : {Layer::L2, Layer::L3, Layer::L4, Layer::Payload})
    layers[layer_name(layer)] = access_name(access(layer));
  return {{"stateful", stateful},   {"may_drop", may_drop},     {"random", random}, {"layers", layers},
          {"reads", reads.names()}, {"writes", writes.names()}, {"gates", gates}};
}

bool may_run_in_parallel(const NfDescriptor& a, const NfDescriptor& b) {
  if (a.may_drop || b.may_drop) return false;
  return !a.writes.intersects(b.reads | b.writes) && !b.writes.intersects(a.reads | a.writes);
}

HeaderField field_at(size_t offset, size_t ip_header_bytes, bool tcp) {
  constexpr HeaderField kEthernet[14] = {
      HeaderField::EthDst, HeaderField::EthDst, HeaderField::EthDst,  HeaderField::EthDst, HeaderField::EthDst,
      HeaderField::EthDst, HeaderField::EthSrc, HeaderField::EthSrc,  HeaderField::EthSrc, HeaderField::EthSrc,
      HeaderField::EthSrc, HeaderField::EthSrc, HeaderField::EthType, HeaderField::EthType};
  constexpr HeaderField kIpv4[20] = {
      HeaderField::Ipv4VersionIhl,  HeaderField::Ipv4Tos,      HeaderField::Ipv4TotalLength,
      HeaderField::Ipv4TotalLength, HeaderField::Ipv4Fragment, HeaderField::Ipv4Fragment,
      HeaderField::Ipv4Fragment,    HeaderField::Ipv4Fragment, HeaderField::Ipv4Ttl,
      HeaderField::Ipv4Protocol,    HeaderField::Ipv4Checksum, HeaderField::Ipv4Checksum,
      HeaderField::Ipv4Src,         HeaderField::Ipv4Src,      HeaderField::Ipv4Src,
      HeaderField::Ipv4Src,         HeaderField::Ipv4Dst,      HeaderField::Ipv4Dst,
      HeaderField::Ipv4Dst,         HeaderField::Ipv4Dst};
  if (offset < 14) return kEthernet[offset];
  offset -= 14;
  if (offset < ip_header_bytes) return offset < 20 ? kIpv4[offset] : HeaderField::Ipv4Options;
  offset -= ip_header_bytes;
  if (offset < 2) return HeaderField::L4SrcPort;
  if (offset < 4) return HeaderField::L4DstPort;
  if (!tcp) {
    if (offset < 6) return HeaderField::L4Length;
    if (offset < 8) return HeaderField::L4Checksum;
    return HeaderField::Payload;
  }
  if (offset == 16 || offset == 17) return HeaderField::L4Checksum;
  return offset < 20 ? HeaderField::L4Other : HeaderField::Payload;
}

}  // namespace tandem
