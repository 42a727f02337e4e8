// The 5-tuple ACL on rte_acl, IPv4 and IPv6: the rules' fields, the contexts' build, and a classify call per family
// and batch.
#include "flow_acl.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <rte_errno.h>

#include "dataplane/packets/ip_view.h"

namespace tandem {
namespace {

// The classic DPDK IPv4 5-tuple layout (as in examples/l3fwd-acl): fields are read relative to the
// protocol byte of the IPv4 header; both ports share one 4-byte input word.
enum { kFieldProto, kFieldSrc, kFieldDst, kFieldSrcPort, kFieldDstPort, kFieldCount };

constexpr uint32_t kProtoOffset = offsetof(rte_ipv4_hdr, next_proto_id);

const rte_acl_field_def kFieldDefs[kFieldCount] = {
    {.type = RTE_ACL_FIELD_TYPE_BITMASK,
     .size = sizeof(uint8_t),
     .field_index = kFieldProto,
     .input_index = 0,
     .offset = 0},
    {.type = RTE_ACL_FIELD_TYPE_MASK,
     .size = sizeof(uint32_t),
     .field_index = kFieldSrc,
     .input_index = 1,
     .offset = offsetof(rte_ipv4_hdr, src_addr) - kProtoOffset},
    {.type = RTE_ACL_FIELD_TYPE_MASK,
     .size = sizeof(uint32_t),
     .field_index = kFieldDst,
     .input_index = 2,
     .offset = offsetof(rte_ipv4_hdr, dst_addr) - kProtoOffset},
    {.type = RTE_ACL_FIELD_TYPE_RANGE,
     .size = sizeof(uint16_t),
     .field_index = kFieldSrcPort,
     .input_index = 3,
     .offset = sizeof(rte_ipv4_hdr) - kProtoOffset},
    {.type = RTE_ACL_FIELD_TYPE_RANGE,
     .size = sizeof(uint16_t),
     .field_index = kFieldDstPort,
     .input_index = 3,
     .offset = sizeof(rte_ipv4_hdr) - kProtoOffset + sizeof(uint16_t)},
};

RTE_ACL_RULE_DEF(AclRule, kFieldCount);

// IPv6 (as in DPDK's examples/l3fwd's IPv6 ACL): the protocol byte, each address as four 4-byte words, the ports in
// one word. Extension headers stand between the addresses and the ports, so every packet's fields are copied into
// this key: the next header, a byte of padding, the addresses, the ports.
enum {
  kField6Proto,
  kField6Src,
  kField6Dst = kField6Src + 4,
  kField6SrcPort = kField6Dst + 4,
  kField6DstPort,
  kField6Count
};
constexpr uint32_t kKey6Src = 2, kKey6Dst = kKey6Src + 16, kKey6Ports = kKey6Dst + 16, kKey6Bytes = kKey6Ports + 4;

std::vector<rte_acl_field_def> ipv6_field_defs() {
  std::vector<rte_acl_field_def> defs = {
      {.type = RTE_ACL_FIELD_TYPE_BITMASK, .size = 1, .field_index = kField6Proto, .input_index = 0, .offset = 0}};
  for (uint8_t word = 0; word < 8; word++)
    defs.push_back({.type = RTE_ACL_FIELD_TYPE_MASK,
                    .size = sizeof(uint32_t),
                    .field_index = static_cast<uint8_t>(kField6Src + word),
                    .input_index = static_cast<uint8_t>(1 + word),
                    .offset = kKey6Src + 4u * word});
  for (uint8_t port = 0; port < 2; port++)
    defs.push_back({.type = RTE_ACL_FIELD_TYPE_RANGE,
                    .size = sizeof(uint16_t),
                    .field_index = static_cast<uint8_t>(kField6SrcPort + port),
                    .input_index = 9,
                    .offset = kKey6Ports + 2u * port});
  return defs;
}

RTE_ACL_RULE_DEF(Acl6Rule, kField6Count);

// An IPv6 prefix as the four words' values (host byte order) and prefix lengths rte_acl takes.
void set_words(const std::array<uint8_t, 16>& address, uint8_t prefix, rte_acl_field* words) {
  for (int w = 0; w < 4; w++) {
    uint32_t network;
    memcpy(&network, address.data() + 4 * w, sizeof network);
    words[w].value.u32 = rte_be_to_cpu_32(network);
    words[w].mask_range.u32 = static_cast<uint32_t>(std::clamp(prefix - 32 * w, 0, 32));
  }
}

void copy_key6(const IpInFrame& ip, const uint8_t* ports, uint8_t* key) {
  key[0] = ip.l4_protocol;
  key[1] = 0;
  memcpy(key + kKey6Src, &ip.ipv6->src_addr, 16);
  memcpy(key + kKey6Dst, &ip.ipv6->dst_addr, 16);
  memcpy(key + kKey6Ports, ports, 2 * sizeof(uint16_t));
}

// Creates, fills and builds one context; nullptr for no rules (rte_acl cannot build an empty context).
template <typename Rule>
rte_acl_ctx* built_context(const std::string& name, std::vector<Rule>& rules, const rte_acl_field_def* defs,
                           uint32_t field_count) {
  if (rules.empty()) return nullptr;
  rte_acl_param params{};
  params.name = name.c_str();
  params.socket_id = SOCKET_ID_ANY;
  params.rule_size = RTE_ACL_RULE_SZ(field_count);
  params.max_rule_num = static_cast<uint32_t>(rules.size()) + 1;
  rte_acl_ctx* acl = rte_acl_create(&params);
  if (acl == nullptr) throw std::runtime_error("rte_acl_create failed for " + name + ": " + rte_strerror(rte_errno));
  if (rte_acl_add_rules(acl, reinterpret_cast<rte_acl_rule*>(rules.data()), rules.size()) != 0) {
    rte_acl_free(acl);
    throw std::runtime_error("rte_acl_add_rules failed for " + name);
  }
  rte_acl_config config{};
  config.num_categories = 1;
  config.num_fields = field_count;
  memcpy(config.defs, defs, field_count * sizeof(rte_acl_field_def));
  if (int rc = rte_acl_build(acl, &config); rc != 0) {
    rte_acl_free(acl);
    throw std::runtime_error("rte_acl_build failed for " + name + ": " + rte_strerror(-rc));
  }
  return acl;
}

// The ACL's input from the protocol byte on, for a header with options: the ports sit after the options, not at the
// fixed offset the fields name, so the fields are copied into this layout first.
constexpr uint32_t kKeyBytes = sizeof(rte_ipv4_hdr) - kProtoOffset + 2 * sizeof(uint16_t);

void copy_key(const rte_ipv4_hdr* ip, const uint8_t* ports, uint8_t* key) {
  key[0] = ip->next_proto_id;
  memcpy(key + offsetof(rte_ipv4_hdr, src_addr) - kProtoOffset, &ip->src_addr, sizeof ip->src_addr);
  memcpy(key + offsetof(rte_ipv4_hdr, dst_addr) - kProtoOffset, &ip->dst_addr, sizeof ip->dst_addr);
  memcpy(key + sizeof(rte_ipv4_hdr) - kProtoOffset, ports, 2 * sizeof(uint16_t));
}

}  // namespace

FlowAcl::FlowAcl(const std::string& name, const std::vector<FirewallRule>& rules, const std::vector<uint32_t>& values) {
  if (rules.size() != values.size()) throw std::invalid_argument("FlowAcl " + name + ": one value per rule");
  std::vector<AclRule> rules4;
  std::vector<Acl6Rule> rules6;
  for (size_t i = 0; i < rules.size(); i++) {
    const FirewallRule& r = rules[i];
    rte_acl_rule_data data{.category_mask = 1,
                           .priority = static_cast<int32_t>(rules.size() - i),  // earlier rules win
                           .userdata = values[i] + 1};  // rte_acl's userdata 0 means "no rule matched"
    if (r.family != IpFamily::V6) {
      AclRule& a = rules4.emplace_back();
      a.data = data;
      a.field[kFieldProto].value.u8 = r.proto.value_or(0);
      a.field[kFieldProto].mask_range.u8 = r.proto ? 0xff : 0;
      a.field[kFieldSrc].value.u32 = r.src_ip;
      a.field[kFieldSrc].mask_range.u32 = r.family == IpFamily::V4 ? r.src_prefix : 0;
      a.field[kFieldDst].value.u32 = r.dst_ip;
      a.field[kFieldDst].mask_range.u32 = r.family == IpFamily::V4 ? r.dst_prefix : 0;
      a.field[kFieldSrcPort].value.u16 = r.src_port_lo;
      a.field[kFieldSrcPort].mask_range.u16 = r.src_port_hi;
      a.field[kFieldDstPort].value.u16 = r.dst_port_lo;
      a.field[kFieldDstPort].mask_range.u16 = r.dst_port_hi;
    }
    if (r.family != IpFamily::V4) {
      Acl6Rule& a = rules6.emplace_back();
      a.data = data;
      a.field[kField6Proto].value.u8 = r.proto.value_or(0);
      a.field[kField6Proto].mask_range.u8 = r.proto ? 0xff : 0;
      set_words(r.src_ip6, r.family == IpFamily::V6 ? r.src_prefix : 0, &a.field[kField6Src]);
      set_words(r.dst_ip6, r.family == IpFamily::V6 ? r.dst_prefix : 0, &a.field[kField6Dst]);
      a.field[kField6SrcPort].value.u16 = r.src_port_lo;
      a.field[kField6SrcPort].mask_range.u16 = r.src_port_hi;
      a.field[kField6DstPort].value.u16 = r.dst_port_lo;
      a.field[kField6DstPort].mask_range.u16 = r.dst_port_hi;
    }
  }
  acl_ = built_context(name, rules4, kFieldDefs, kFieldCount);
  std::vector<rte_acl_field_def> defs6 = ipv6_field_defs();
  try {
    acl6_ = built_context(name + "6", rules6, defs6.data(), kField6Count);
  } catch (...) {
    rte_acl_free(acl_);
    throw;
  }
}

FlowAcl::~FlowAcl() {
  rte_acl_free(acl_);
  rte_acl_free(acl6_);
}

int FlowAcl::release(const std::string& name) {
  int freed = 0;
  for (const std::string& context : {name, name + "6"})
    if (rte_acl_ctx* acl = rte_acl_find_existing(context.c_str())) {
      rte_acl_free(acl);
      freed++;
    }
  return freed;
}

void FlowAcl::classify(const Batch& batch, uint32_t* out) const {
  const uint8_t* fields[kMaxBurst];
  const uint8_t* fields6[kMaxBurst];
  uint32_t results[kMaxBurst];
  uint16_t order[kMaxBurst], order6[kMaxBurst];  // the batch index of each packet handed to each context
  uint8_t keys[kMaxBurst][std::max(kKeyBytes, kKey6Bytes)];
  uint16_t readable = 0, readable6 = 0;
  for (uint16_t i = 0; i < batch.count; i++) {
    out[i] = kUnreadable;
    rte_mbuf* m = batch.pkts[i];
    IpInFrame found = ip_in_frame(m);
    if (found.version == 6) {
      // Its ports, where it has a transport header and the frame holds them: a later fragment, a chain of
      // extension headers too long to walk, or a cut frame is unreadable.
      if (found.l4_offset == 0 || rte_pktmbuf_data_len(m) < found.l4_offset + 2 * sizeof(uint16_t)) continue;
      copy_key6(found, rte_pktmbuf_mtod_offset(m, const uint8_t*, found.l4_offset), keys[i]);
      fields6[readable6] = keys[i];
      order6[readable6++] = i;
      continue;
    }
    rte_ipv4_hdr* ip = found.ipv4;
    if (ip == nullptr || ip->ihl < 5) continue;
    uint32_t l4 = found.l3_offset + ip->ihl * 4u;
    // The 4 bytes after the header (the ports of UDP and TCP) must be in the frame: a truncated one is unreadable.
    if (rte_pktmbuf_data_len(m) < l4 + 2 * sizeof(uint16_t)) continue;
    if (ip->ihl == 5) {  // the ports at the fixed offset: the ACL reads the packet itself
      fields[readable] = &ip->next_proto_id;
    } else {  // options (Router Alert, timestamps, ...) between the addresses and the ports
      copy_key(ip, rte_pktmbuf_mtod_offset(m, const uint8_t*, l4), keys[i]);
      fields[readable] = keys[i];
    }
    order[readable++] = i;
  }
  auto settle = [&](rte_acl_ctx* acl, const uint8_t** data, const uint16_t* indexes, uint16_t count) {
    if (count > 0 && acl != nullptr) rte_acl_classify(acl, data, results, count, 1);
    for (uint16_t j = 0; j < count; j++)
      out[indexes[j]] = acl != nullptr && results[j] != 0 ? results[j] - 1 : kNoMatch;
  };
  settle(acl_, fields, order, readable);
  settle(acl6_, fields6, order6, readable6);
}

}  // namespace tandem
