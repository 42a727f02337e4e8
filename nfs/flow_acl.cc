// The IPv4 5-tuple ACL on rte_acl: the rules' fields, the context's build, and one classify call per batch.
#include "flow_acl.h"

#include <cstring>
#include <stdexcept>

#include <rte_errno.h>

#include "dataplane/packets/ipv4_view.h"

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
  if (rules.empty()) return;  // rte_acl cannot build an empty context: every readable packet is kNoMatch
  rte_acl_param params{};
  params.name = name.c_str();
  params.socket_id = SOCKET_ID_ANY;
  params.rule_size = RTE_ACL_RULE_SZ(kFieldCount);
  params.max_rule_num = static_cast<uint32_t>(rules.size()) + 1;
  acl_ = rte_acl_create(&params);
  if (acl_ == nullptr) throw std::runtime_error("rte_acl_create failed for " + name + ": " + rte_strerror(rte_errno));

  std::vector<AclRule> acl_rules(rules.size());
  for (size_t i = 0; i < rules.size(); i++) {
    const FirewallRule& r = rules[i];
    AclRule& a = acl_rules[i];
    a.data.category_mask = 1;
    a.data.priority = static_cast<int32_t>(rules.size() - i);  // earlier rules win
    a.data.userdata = values[i] + 1;                           // rte_acl's userdata 0 means "no rule matched"
    a.field[kFieldProto].value.u8 = r.proto.value_or(0);
    a.field[kFieldProto].mask_range.u8 = r.proto ? 0xff : 0;
    a.field[kFieldSrc].value.u32 = r.src_ip;
    a.field[kFieldSrc].mask_range.u32 = r.src_prefix;
    a.field[kFieldDst].value.u32 = r.dst_ip;
    a.field[kFieldDst].mask_range.u32 = r.dst_prefix;
    a.field[kFieldSrcPort].value.u16 = r.src_port_lo;
    a.field[kFieldSrcPort].mask_range.u16 = r.src_port_hi;
    a.field[kFieldDstPort].value.u16 = r.dst_port_lo;
    a.field[kFieldDstPort].mask_range.u16 = r.dst_port_hi;
  }
  if (rte_acl_add_rules(acl_, reinterpret_cast<rte_acl_rule*>(acl_rules.data()), acl_rules.size()) != 0) {
    rte_acl_free(acl_);
    throw std::runtime_error("rte_acl_add_rules failed for " + name);
  }
  rte_acl_config config{};
  config.num_categories = 1;
  config.num_fields = kFieldCount;
  memcpy(config.defs, kFieldDefs, sizeof(kFieldDefs));
  if (int rc = rte_acl_build(acl_, &config); rc != 0) {
    rte_acl_free(acl_);
    throw std::runtime_error("rte_acl_build failed for " + name + ": " + rte_strerror(-rc));
  }
}

FlowAcl::~FlowAcl() { rte_acl_free(acl_); }

void FlowAcl::classify(const Batch& batch, uint32_t* out) const {
  const uint8_t* fields[kMaxBurst];
  uint32_t results[kMaxBurst];
  uint16_t order[kMaxBurst];  // the batch index of each packet handed to the ACL
  uint8_t keys[kMaxBurst][kKeyBytes];
  uint16_t readable = 0;
  for (uint16_t i = 0; i < batch.count; i++) {
    out[i] = kUnreadable;
    auto [ip, l3] = ipv4_in_frame(batch.pkts[i]);
    if (ip == nullptr || ip->ihl < 5) continue;
    uint32_t l4 = l3 + ip->ihl * 4u;
    // The 4 bytes after the header (the ports of UDP and TCP) must be in the frame: a truncated one is unreadable.
    if (rte_pktmbuf_data_len(batch.pkts[i]) < l4 + 2 * sizeof(uint16_t)) continue;
    if (ip->ihl == 5) {  // the ports at the fixed offset: the ACL reads the packet itself
      fields[readable] = &ip->next_proto_id;
    } else {  // options (Router Alert, timestamps, ...) between the addresses and the ports
      copy_key(ip, rte_pktmbuf_mtod_offset(batch.pkts[i], const uint8_t*, l4), keys[i]);
      fields[readable] = keys[i];
    }
    order[readable++] = i;
  }
  if (readable > 0 && acl_ != nullptr) rte_acl_classify(acl_, fields, results, readable, 1);
  for (uint16_t j = 0; j < readable; j++)
    out[order[j]] = acl_ != nullptr && results[j] != 0 ? results[j] - 1 : kNoMatch;
}

}  // namespace tandem
