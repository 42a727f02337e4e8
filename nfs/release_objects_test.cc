// Tests of NF types' release_objects: the DPDK objects an instance left behind (its destructor never run, as when its
// process exits or crashes) are found by the instance's name and freed, so the name can be built again.
#include "nf_test_support.h"

namespace tandem {
namespace {

const json kBothFamilies = {{"rules", json::array({{{"dst", "10.0.0.0/8"}, {"action", "deny"}},
                                                   {{"dst", "2001:db8::/32"}, {"action", "deny"}}})}};

// Instances left as a worker's exit leaves them: never destroyed (their destructors would free the objects again),
// and reachable, so that the sanitizers' leak check does not count them.
auto* const left_behind = new std::vector<std::unique_ptr<NetworkFunction>>();

// Builds an instance under `unique_name` and leaves it behind; returns what release freed.
int left_then_released(const std::string& type, const json& args, const std::string& unique_name) {
  const NfType& nf_type = nf_types().at(type);
  json resolved = testing::resolved_args(type, args);
  left_behind->push_back(nf_type.create(resolved, {type, unique_name, 0}));
  return nf_type.release_objects(unique_name);
}

TEST(ReleaseObjects, AFirewallsTwoAclContextsAreFreedAndItsNameBuildsAgain) {
  std::string name = nf_instance_name(7, 3, 2);
  EXPECT_EQ(left_then_released("firewall", kBothFamilies, name), 2);
  EXPECT_EQ(nf_types().at("firewall").release_objects(name), 0);      // nothing left under it
  EXPECT_EQ(left_then_released("firewall", kBothFamilies, name), 2);  // the name was free to build again
}

TEST(ReleaseObjects, ACountersFlowTableIsFreed) {
  std::string name = nf_instance_name(7, 4, 0);
  EXPECT_EQ(left_then_released("counter", {{"max_flows", 1024}}, name), 1);
  EXPECT_EQ(nf_types().at("counter").release_objects(name), 0);
}

TEST(ReleaseObjects, AFlowClassifiersContextIsFreed) {
  json args = {{"rules", json::array({{{"sfc", "web"}, {"dst_port", 80}, {"proto", "tcp"}}})}};
  std::string name = nf_instance_name(8, 0, 0);
  EXPECT_EQ(left_then_released("flow_classifier", args, name), 2);  // a rule without addresses is both families'

  EXPECT_EQ(nf_types().at("flow_classifier").release_objects(name), 0);
}

TEST(ReleaseObjects, InstanceNamesOfOneProcessDifferByNfAndGeneration) {
  EXPECT_EQ(nf_instance_name(12, 3, 0), "12_3");
  EXPECT_EQ(nf_instance_name(12, 3, 5), "12_3g5");
  EXPECT_NE(nf_instance_name(1, 23, 0), nf_instance_name(12, 3, 0));
}

}  // namespace
}  // namespace tandem
