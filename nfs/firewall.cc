// firewall: allow/deny on the IPv4 5-tuple, classified with DPDK's rte_acl (first matching rule wins).
#include <rte_acl.h>
#include <rte_errno.h>

#include "firewall_rules.h"
#include "contract/ipv4_view.h"
#include "nf.h"

namespace tandem {
namespace {

// The classic DPDK IPv4 5-tuple layout (as in examples/l3fwd-acl): fields are read relative to the
// protocol byte of the IPv4 header; both ports share one 4-byte input word.
enum { kFieldProto, kFieldSrc, kFieldDst, kFieldSrcPort, kFieldDstPort, kFieldCount };

constexpr uint32_t kProtoOffset = offsetof(rte_ipv4_hdr, next_proto_id);

const rte_acl_field_def kFieldDefs[kFieldCount] = {
    {.type = RTE_ACL_FIELD_TYPE_BITMASK, .size = sizeof(uint8_t), .field_index = kFieldProto, .input_index = 0, .offset = 0},
    {.type = RTE_ACL_FIELD_TYPE_MASK, .size = sizeof(uint32_t), .field_index = kFieldSrc, .input_index = 1,
     .offset = offsetof(rte_ipv4_hdr, src_addr) - kProtoOffset},
    {.type = RTE_ACL_FIELD_TYPE_MASK, .size = sizeof(uint32_t), .field_index = kFieldDst, .input_index = 2,
     .offset = offsetof(rte_ipv4_hdr, dst_addr) - kProtoOffset},
    {.type = RTE_ACL_FIELD_TYPE_RANGE, .size = sizeof(uint16_t), .field_index = kFieldSrcPort, .input_index = 3,
     .offset = sizeof(rte_ipv4_hdr) - kProtoOffset},
    {.type = RTE_ACL_FIELD_TYPE_RANGE, .size = sizeof(uint16_t), .field_index = kFieldDstPort, .input_index = 3,
     .offset = sizeof(rte_ipv4_hdr) - kProtoOffset + sizeof(uint16_t)},
};

RTE_ACL_RULE_DEF(FirewallAclRule, kFieldCount);

// rte_acl userdata 0 means "no rule matched", so actions are stored shifted by one.
constexpr uint32_t kAllow = 1, kDeny = 2;

class Firewall final : public NetworkFunction {
 public:
  Firewall(const std::vector<FirewallRule>& rules, bool default_allow, const NfContext& context)
      : default_allow_(default_allow) {
    if (rules.empty()) return;  // rte_acl cannot build an empty context; every packet gets the default
    std::string name = "fw_" + context.unique_name;
    rte_acl_param params{};
    params.name = name.c_str();
    params.socket_id = SOCKET_ID_ANY;
    params.rule_size = RTE_ACL_RULE_SZ(kFieldCount);
    params.max_rule_num = static_cast<uint32_t>(rules.size()) + 1;
    acl_ = rte_acl_create(&params);
    if (acl_ == nullptr) throw std::runtime_error("rte_acl_create failed for " + name + ": " + rte_strerror(rte_errno));

    std::vector<FirewallAclRule> acl_rules(rules.size());
    for (size_t i = 0; i < rules.size(); i++) {
      const FirewallRule& r = rules[i];
      FirewallAclRule& a = acl_rules[i];
      a.data.category_mask = 1;
      a.data.priority = static_cast<int32_t>(rules.size() - i);  // earlier rules win
      a.data.userdata = r.allow ? kAllow : kDeny;
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
    if (rte_acl_add_rules(acl_, reinterpret_cast<rte_acl_rule*>(acl_rules.data()), acl_rules.size()) != 0)
      throw std::runtime_error("rte_acl_add_rules failed for " + name);
    rte_acl_config config{};
    config.num_categories = 1;
    config.num_fields = kFieldCount;
    memcpy(config.defs, kFieldDefs, sizeof(kFieldDefs));
    if (int rc = rte_acl_build(acl_, &config); rc != 0)
      throw std::runtime_error("rte_acl_build failed for " + name + ": " + rte_strerror(-rc));
  }
  ~Firewall() override { rte_acl_free(acl_); }

  void process(Batch& batch) override {
    const uint8_t* fields[kMaxBurst];
    uint32_t results[kMaxBurst];
    uint16_t classified = 0;
    uint16_t order[kMaxBurst];  // index in batch of each classified packet
    batch.for_each([&](uint16_t i) {
      rte_ipv4_hdr* ip = ipv4_header(batch.pkts[i]);
      // The ACL reads the ports at a fixed offset: only plain 20-byte headers of full frames qualify.
      if (ip != nullptr && ip->ihl == 5 && rte_pktmbuf_data_len(batch.pkts[i]) >= sizeof(rte_ether_hdr) + 24) {
        fields[classified] = &ip->next_proto_id;
        order[classified++] = i;
      }
    });
    if (classified > 0 && acl_ != nullptr) rte_acl_classify(acl_, fields, results, classified, 1);
    uint32_t verdict[kMaxBurst];
    for (uint16_t i = 0; i < batch.count; i++) verdict[i] = kDeny;  // unparseable packets are denied
    for (uint16_t j = 0; j < classified; j++)
      verdict[order[j]] = acl_ != nullptr && results[j] != 0 ? results[j] : (default_allow_ ? kAllow : kDeny);
    uint16_t position = 0;
    batch.filter([&](rte_mbuf*) {
      bool allowed = verdict[position++] == kAllow;
      (allowed ? allowed_ : denied_)++;
      return allowed;
    });
  }

  json report() const override { return {{"allowed", allowed_}, {"denied", denied_}}; }

 private:
  rte_acl_ctx* acl_ = nullptr;
  bool default_allow_;
  uint64_t allowed_ = 0, denied_ = 0;
};

const NfRegistration registration({
    .name = "firewall",
    .help = "L3/L4 allow/deny rules on the 5-tuple (rte_acl); the first matching rule wins.",
    .args = {{.name = "rules", .type = ArgType::List, .default_value = json::array(),
              .help = "list of {src, dst, src_port, dst_port, proto, action}; e.g. {dst_port: 22, proto: tcp, action: deny}"},
             {.name = "synthetic_rules", .type = ArgType::Integer, .default_value = 0,
              .help = "extra deny rules on 172.16.0.0/12, which the generator never sends, to size the rule set",
              .min = 0, .max = 100000},
             {.name = "default", .type = ArgType::Choice, .default_value = "allow",
              .help = "action when no rule matches", .choices = {"allow", "deny"}}},
    .check =
        [](const json& args, const std::string& path, SpecErrors& errors) {
          if (!args["rules"].is_array()) return;
          for (size_t i = 0; i < args["rules"].size(); i++)
            parse_firewall_rule(args["rules"][i], path + ".rules[" + std::to_string(i) + "]", errors);
        },
    .create =
        [](const json& args, const NfContext& context) {
          return std::make_unique<Firewall>(firewall_rules_from_args(args), args["default"] == "allow", context);
        },
    .descriptor = {.may_drop = true, .reads = {HeaderField::EthType, HeaderField::Ipv4VersionIhl, HeaderField::Ipv4Protocol, HeaderField::Ipv4Src, HeaderField::Ipv4Dst, HeaderField::L4SrcPort, HeaderField::L4DstPort}},
});

}  // namespace
}  // namespace tandem
