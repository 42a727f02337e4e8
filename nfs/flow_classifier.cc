// flow_classifier (μNF): the Rx classifier of several SFCs: each packet's IPv4 5-tuple matched against the SFCs'
// flow rules with DPDK's rte_acl (first matching rule wins) and sent to the gate named after its SFC; a packet that
// matches no rule is dropped and counted.
#include <algorithm>

#include "firewall_rules.h"
#include "flow_acl.h"
#include "nf.h"

namespace tandem {
namespace {

std::string acl_name(const std::string& unique_name) { return "fc_" + unique_name; }

constexpr size_t kMaxSfcs = 64;  // a gate is a byte; a fan-out of 64 rings is already far past any SFC mix here

struct SfcRule {
  FirewallRule match;
  std::string sfc;
};

// A rule is a firewall rule's match (src, dst, src_port, dst_port, proto) with the SFC it selects instead of an action.
std::optional<SfcRule> parse_sfc_rule(const json& rule, const std::string& path, SpecErrors& errors) {
  if (!rule.is_object() || !rule.contains("sfc") || !rule["sfc"].is_string() ||
      rule["sfc"].get<std::string>().empty()) {
    errors.push_back(
        {path + ".sfc",
         "each rule names the SFC its packets go to (sfc: NAME), with any of src, dst, src_port, dst_port, proto"});
    return std::nullopt;
  }
  if (rule.contains("action")) {
    errors.push_back({path + ".action", "a flow classifier's rule selects an SFC (sfc: NAME), not an action"});
    return std::nullopt;
  }
  json match = rule;
  match.erase("sfc");
  match["action"] = "allow";  // a firewall rule's required field; the SFC stands in for it here
  std::optional<FirewallRule> parsed = parse_firewall_rule(match, path, errors);
  if (!parsed) return std::nullopt;
  return SfcRule{*parsed, rule["sfc"].get<std::string>()};
}

std::vector<SfcRule> sfc_rules(const json& args, const std::string& path, SpecErrors& errors) {
  std::vector<SfcRule> rules;
  if (!args["rules"].is_array()) return rules;
  for (size_t i = 0; i < args["rules"].size(); i++)
    if (auto rule = parse_sfc_rule(args["rules"][i], path + ".rules[" + std::to_string(i) + "]", errors))
      rules.push_back(*rule);
  return rules;
}

// The gates: the SFCs in the order the rules first name them.
std::vector<std::string> sfc_gates(const json& args) {
  SpecErrors ignored;
  std::vector<std::string> gates;
  for (const SfcRule& rule : sfc_rules(args, "args", ignored))
    if (std::find(gates.begin(), gates.end(), rule.sfc) == gates.end()) gates.push_back(rule.sfc);
  return gates;
}

class FlowClassifier final : public NetworkFunction {
 public:
  FlowClassifier(const json& args, const NfContext& context)
      : gates_(sfc_gates(args)),
        acl_(acl_for(args, gates_, acl_name(context.unique_name))),
        matched_(gates_.size(), 0) {}

  void process(Batch& batch) override {
    uint32_t gate[kMaxBurst];  // the SFC's gate, or FlowAcl::kNoMatch / kUnreadable
    acl_->classify(batch, gate);
    for (uint16_t i = 0; i < batch.count; i++)
      batch.gates[i] = gate[i] < gates_.size() ? static_cast<uint8_t>(gate[i]) : 0;
    uint16_t position = 0;
    batch.filter([&](rte_mbuf*) {  // keeps each packet's gate with it
      uint32_t g = gate[position++];
      if (g >= gates_.size()) {
        unmatched_++;
        return false;
      }
      matched_[g]++;
      return true;
    });
  }

  json report() const override {
    json per_sfc = json::object();
    for (size_t g = 0; g < gates_.size(); g++) per_sfc[gates_[g]] = matched_[g];
    return {{"sfcs", per_sfc}, {"unmatched", unmatched_}};
  }

 private:
  static std::unique_ptr<FlowAcl> acl_for(const json& args, const std::vector<std::string>& gates,
                                          const std::string& name) {
    SpecErrors errors;  // checked before the run: none here
    std::vector<FirewallRule> matches;
    std::vector<uint32_t> gate_of_rule;
    for (const SfcRule& rule : sfc_rules(args, "args", errors)) {
      matches.push_back(rule.match);
      gate_of_rule.push_back(static_cast<uint32_t>(std::find(gates.begin(), gates.end(), rule.sfc) - gates.begin()));
    }
    return std::make_unique<FlowAcl>(name, matches, gate_of_rule);
  }

  std::vector<std::string> gates_;
  std::unique_ptr<FlowAcl> acl_;
  std::vector<uint64_t> matched_;
  uint64_t unmatched_ = 0;
};

const NfRegistration registration({
    .name = "flow_classifier",
    .help = "μNF: the Rx classifier of several SFCs: matches each packet's 5-tuple against the rules (rte_acl, first "
            "match wins) and sends it to the gate named after the rule's SFC; drops (and counts) what matches no rule.",
    .args = {{.name = "rules",
              .type = ArgType::List,
              .default_value = json::array(),
              .help = "list of {sfc, src, dst, src_port, dst_port, proto}; e.g. {sfc: web, dst_port: 80, proto: tcp}; "
                      "its gates are the SFCs, in the order the rules first name them"}},
    .check =
        [](const json& args, const std::string& path, SpecErrors& errors) {
          sfc_rules(args, path, errors);
          if (sfc_gates(args).size() > kMaxSfcs)
            errors.push_back({path + ".rules", "at most " + std::to_string(kMaxSfcs) + " SFCs behind one classifier"});
        },
    .create = [](const json& args,
                 const NfContext& context) { return std::make_unique<FlowClassifier>(args, context); },
    .release_objects = [](const std::string& unique_name) { return FlowAcl::release(acl_name(unique_name)); },
    .descriptor = {.may_drop = true,
                   .reads = {HeaderField::EthType, HeaderField::Ipv4VersionIhl, HeaderField::Ipv4Protocol,
                             HeaderField::Ipv4Src, HeaderField::Ipv4Dst, HeaderField::L4SrcPort,
                             HeaderField::L4DstPort}},
    .gates_of = sfc_gates,
});

}  // namespace
}  // namespace tandem
