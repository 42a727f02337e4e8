// firewall: allow/deny on the IPv4 5-tuple, classified with DPDK's rte_acl (first matching rule wins).
#include "firewall_rules.h"
#include "flow_acl.h"
#include "nf.h"

namespace tandem {
namespace {

constexpr uint32_t kAllow = 0, kDeny = 1;

std::string acl_name(const std::string& unique_name) { return "fw_" + unique_name; }

class Firewall final : public NetworkFunction {
 public:
  Firewall(const std::vector<FirewallRule>& rules, bool default_allow, const NfContext& context)
      : acl_(acl_name(context.unique_name), rules, verdicts_of(rules)), default_allow_(default_allow) {}

  void process(Batch& batch) override {
    uint32_t verdict[kMaxBurst];
    acl_.classify(batch, verdict);
    uint16_t position = 0;
    batch.filter([&](rte_mbuf*) {
      uint32_t v = verdict[position++];
      // Unparseable packets are denied; a packet no rule matches gets the default.
      bool allowed = v == FlowAcl::kUnreadable ? false : v == FlowAcl::kNoMatch ? default_allow_ : v == kAllow;
      (allowed ? allowed_ : denied_)++;
      if (v == FlowAcl::kUnreadable) unreadable_++;
      return allowed;
    });
  }

  json report() const override {
    return {{"allowed", allowed_}, {"denied", denied_}, {"denied_unreadable", unreadable_}};
  }

 private:
  static std::vector<uint32_t> verdicts_of(const std::vector<FirewallRule>& rules) {
    std::vector<uint32_t> verdicts;
    for (const FirewallRule& rule : rules) verdicts.push_back(rule.allow ? kAllow : kDeny);
    return verdicts;
  }

  FlowAcl acl_;
  bool default_allow_;
  uint64_t allowed_ = 0, denied_ = 0;
  uint64_t unreadable_ = 0;  // of denied_: no rule could read it (see FlowAcl::kUnreadable)
};

const NfRegistration registration({
    .name = "firewall",
    .help = "L3/L4 allow/deny rules on the IPv4 or IPv6 5-tuple (rte_acl); the first matching rule wins.",
    .args =
        {{.name = "rules",
          .type = ArgType::List,
          .default_value = json::array(),
          .help =
              "list of {src, dst, src_port, dst_port, proto, action}; e.g. {dst_port: 22, proto: tcp, action: deny}; "
              "an IPv4 address (10.0.0.0/8) makes a rule IPv4's, an IPv6 one (2001:db8::/32) IPv6's, none both"},
         {.name = "synthetic_rules",
          .type = ArgType::Integer,
          .default_value = 0,
          .help = "extra deny rules on 172.16.0.0/12, which the generator never sends, to size the rule set",
          .min = 0,
          .max = 100000},
         {.name = "default",
          .type = ArgType::Choice,
          .default_value = "allow",
          .help = "action when no rule matches",
          .choices = {"allow", "deny"}}},
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
    .release_objects = [](const std::string& unique_name) { return FlowAcl::release(acl_name(unique_name)); },
    .descriptor = {.may_drop = true,
                   .reads = {HeaderField::EthType, HeaderField::Ipv4VersionIhl, HeaderField::Ipv4Protocol,
                             HeaderField::Ipv4Src, HeaderField::Ipv4Dst, HeaderField::L4SrcPort,
                             HeaderField::L4DstPort}},
});

}  // namespace
}  // namespace tandem
