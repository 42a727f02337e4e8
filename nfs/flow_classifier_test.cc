// Tests of the flow classifier μNF: SFCs chosen by rte_acl on the 5-tuple, its gates from its rules, unmatched
// packets dropped and counted, and its rules' errors naming the field.
#include "nf_test_support.h"

namespace tandem {
namespace {

// Flow f has source 10.0.0.(f+1) and source port 1024+f, destination 192.168.0.1:8080.
json two_sfcs() {
  return {{"rules", json::array({
                        {{"sfc", "web"}, {"src_port", "1024-1031"}, {"proto", "tcp"}},  // flows 0..7 over TCP
                        {{"sfc", "voice"}, {"src", "10.0.0.9/32"}},                     // flow 8
                        {{"sfc", "web"}, {"src", "10.0.0.16/28"}},                      // flows 15..30 (any protocol)
                    })}};
}

TEST(FlowClassifier, ItsGatesAreTheSfcsInTheOrderTheRulesNameThem) {
  EXPECT_EQ(nf_gates(nf_types().at("flow_classifier"), testing::resolved_args("flow_classifier", two_sfcs())),
            (std::vector<std::string>{"web", "voice"}));
}

TEST(FlowClassifier, SendsEachFlowToItsSfcAndDropsWhatMatchesNoRule) {
  auto nf = testing::make_nf("flow_classifier", two_sfcs());
  std::vector<rte_mbuf*> frames;
  for (uint32_t flow = 0; flow < 32; flow++)
    frames.push_back(testing::make_frame(flow, 64, flow < 4 ? IPPROTO_UDP : IPPROTO_TCP));
  std::vector<rte_mbuf*> sent = frames;
  testing::BatchOutcome out = testing::run_batch(*nf, frames);
  // flows 0..3 are UDP (the first rule wants TCP), 9..14 and 31 match nothing: 11 dropped.
  EXPECT_EQ(out.dropped, 11u);
  std::vector<uint32_t> web, voice;
  for (size_t i = 0; i < out.kept.size(); i++) {
    uint32_t flow = static_cast<uint32_t>(std::find(sent.begin(), sent.end(), out.kept[i]) - sent.begin());
    (out.gates[i] == 0 ? web : voice).push_back(flow);
  }
  std::vector<uint32_t> expected_web = {4, 5, 6, 7};
  for (uint32_t flow = 15; flow <= 30; flow++) expected_web.push_back(flow);
  EXPECT_EQ(web, expected_web);
  EXPECT_EQ(voice, (std::vector<uint32_t>{8}));
  EXPECT_EQ(nf->report(), (json{{"sfcs", {{"web", 20}, {"voice", 1}}}, {"unmatched", 11}}));
  testing::free_all(out.kept);
}

TEST(FlowClassifier, RuleErrorsNameTheField) {
  const NfType& type = nf_types().at("flow_classifier");
  SpecErrors errors;
  type.check(json{{"rules", json::array({{{"src_port", "80"}},
                                         {{"sfc", "web"}, {"action", "deny"}},
                                         {{"sfc", "web"}, {"dst", "10.0.0.0/40"}}})}},
             "chains[0].nfs[0].args", errors);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].path, "chains[0].nfs[0].args.rules[0].sfc");
  EXPECT_EQ(errors[1].path, "chains[0].nfs[0].args.rules[1].action");
  EXPECT_EQ(errors[2].path, "chains[0].nfs[0].args.rules[2].dst");
}

}  // namespace
}  // namespace tandem
