// Tests of the sink's hop check: a record must be a path of the chain's graph, along the edge of the label its
// classifier chose, external NFs stepped over, a parallel group one step whose branches all stamped the branch set.
#include "chain_paths.h"

#include <gtest/gtest.h>

#include "contract/packet_meta.h"

namespace tandem {
namespace {

const uint64_t kNoBranches[2] = {0, 0};
const uint8_t kGateZero[kMaxHops] = {};  // every NF chose its first gate (NFs with one output always do)

// The gates the descriptors name; these tests need only the classifier's.
std::vector<std::string> gates_of(const NfConfig& nf) {
  if (nf.type == "http_classifier") return {"http", "other"};
  return {};
}

json node(const std::string& name, const std::string& type = "macswap") {
  return {{"name", name}, {"type", type}, {"core", 1}};
}

Deployment deployment_of(json chain) {
  chain["name"] = "c";
  chain["traffic"] = {{"sizes", {{64, 1.0}}}};
  return parse_deployment({{"scheduler", {{"name", "coop"}}}, {"chains", {chain}}});
}

TEST(ChainPaths, ALineAcceptsOnlyItsNfsInOrder) {
  Deployment d = deployment_of({{"nfs", {node("a"), node("b"), node("c")}}});
  ChainPaths paths(d, d.chains[0], gates_of);
  uint8_t in_order[] = {0, 1, 2}, reordered[] = {0, 2, 1}, repeated[] = {0, 1, 1}, extra[] = {0, 1, 2, 2},
          stranger[] = {0, 1, 200};
  EXPECT_TRUE(paths.allows(in_order, 3, kNoBranches, kGateZero));
  EXPECT_FALSE(paths.allows(reordered, 3, kNoBranches, kGateZero));
  EXPECT_FALSE(paths.allows(repeated, 3, kNoBranches, kGateZero));
  EXPECT_FALSE(paths.allows(in_order, 2, kNoBranches, kGateZero));  // skipped the last NF
  EXPECT_FALSE(paths.allows(extra, 4, kNoBranches, kGateZero));
  EXPECT_FALSE(paths.allows(stranger, 3, kNoBranches, kGateZero));
  EXPECT_FALSE(paths.allows(in_order, 0, kNoBranches, kGateZero));
}

TEST(ChainPaths, AGraphAcceptsEveryPathFromItsEntryToAnExitAndNothingElse) {
  // cls -http-> waf -> count -> out;  cls -other-> out;  count is also an exit
  Deployment d = deployment_of({{"nfs", {node("cls", "http_classifier"), node("waf"), node("count"), node("out")}},
                                {"edges",
                                 {{{"from", "cls"}, {"to", "waf"}, {"label", "http"}},
                                  {{"from", "cls"}, {"to", "out"}, {"label", "other"}},
                                  {{"from", "waf"}, {"to", "count"}},
                                  {{"from", "count"}, {"to", "out"}}}}});
  EXPECT_EQ(d.chains[0].exit_rings.size(), 1u);
  EXPECT_EQ(d.rings[d.chains[0].exit_rings[0]].name, "c:exit");
  EXPECT_EQ(d.nfs[3].in_rings.size(), 2u);  // out is a join
  EXPECT_EQ(d.nfs[3].depth, 3);             // the longest way in: cls, waf, count
  ChainPaths paths(d, d.chains[0], gates_of);
  uint8_t long_way[] = {0, 1, 2, 3}, short_way[] = {0, 3}, skipped[] = {0, 2, 3}, no_exit[] = {0, 1, 2};
  const uint8_t http[kMaxHops] = {0}, other[kMaxHops] = {1}, no_such_gate[kMaxHops] = {7};
  EXPECT_TRUE(paths.allows(long_way, 4, kNoBranches, http));
  EXPECT_TRUE(paths.allows(short_way, 2, kNoBranches, other));
  EXPECT_FALSE(paths.allows(skipped, 3, kNoBranches, http));
  EXPECT_FALSE(paths.allows(no_exit, 3, kNoBranches, http));
  // A path of the graph, but not the one its label leads to: the classifier said other, the packet went to waf.
  EXPECT_FALSE(paths.allows(long_way, 4, kNoBranches, other));
  EXPECT_FALSE(paths.allows(short_way, 2, kNoBranches, http));
  EXPECT_FALSE(paths.allows(long_way, 4, kNoBranches, no_such_gate));
}

TEST(ChainPaths, ALabelledEdgeToTheSinkEndsAPathOnlyForItsGate) {
  // cls -http-> waf (an exit);  cls -other-> the sink directly is not a graph edge, so: cls -other-> log (an exit).
  Deployment d = deployment_of(
      {{"nfs", {node("cls", "http_classifier"), node("waf"), node("log")}},
       {"edges",
        {{{"from", "cls"}, {"to", "waf"}, {"label", "http"}}, {{"from", "cls"}, {"to", "log"}, {"label", "other"}}}}});
  ChainPaths paths(d, d.chains[0], gates_of);
  uint8_t to_waf[] = {0, 1}, to_log[] = {0, 2}, stopped[] = {0};
  const uint8_t http[kMaxHops] = {0}, other[kMaxHops] = {1};
  EXPECT_TRUE(paths.allows(to_waf, 2, kNoBranches, http));
  EXPECT_TRUE(paths.allows(to_log, 2, kNoBranches, other));
  EXPECT_FALSE(paths.allows(to_waf, 2, kNoBranches, other));
  EXPECT_FALSE(paths.allows(stopped, 1, kNoBranches, http));  // a fan-out is no exit for either label
}

TEST(ChainPaths, AnExternalNfIsSteppedOver) {
  Deployment d = deployment_of({{"nfs", {node("a"), node("pmd", "external"), node("b")}}});
  ChainPaths paths(d, d.chains[0], gates_of);
  uint8_t stepped_over[] = {0, 2}, only_a[] = {0};
  EXPECT_TRUE(paths.allows(stepped_over, 2, kNoBranches, kGateZero));
  EXPECT_FALSE(paths.allows(only_a, 1, kNoBranches, kGateZero));
}

TEST(ChainPaths, AParallelGroupIsOneStepWhoseBranchesMustAllHaveStamped) {
  // a forks to b1 -> b2 and to c; both re-join at j.
  Deployment d = deployment_of({{"nfs", {node("a"), node("b1"), node("b2"), node("c"), node("j")}},
                                {"edges",
                                 {{{"from", "a"}, {"to", "b1"}},
                                  {{"from", "a"}, {"to", "c"}},
                                  {{"from", "b1"}, {"to", "b2"}},
                                  {{"from", "b2"}, {"to", "j"}},
                                  {{"from", "c"}, {"to", "j"}}}}});
  EXPECT_TRUE(d.nfs[0].forks());
  EXPECT_EQ(d.nfs[0].branches, (std::vector<std::vector<int>>{{1, 2}, {3}}));
  EXPECT_TRUE(d.nfs[1].in_branch && !d.nfs[1].ends_branch);
  EXPECT_TRUE(d.nfs[2].in_branch && d.nfs[2].ends_branch);
  EXPECT_TRUE(d.nfs[3].in_branch && d.nfs[3].ends_branch);
  EXPECT_FALSE(d.nfs[4].in_branch || d.nfs[4].forks());
  ChainPaths paths(d, d.chains[0], gates_of);
  uint8_t through[] = {0, 4}, inside[] = {0, 1, 4};
  const uint64_t all[2] = {0b01110, 0}, one_missing[2] = {0b00110, 0}, one_more[2] = {0b11110, 0}, none[2] = {0, 0};
  EXPECT_TRUE(paths.allows(through, 2, all, kGateZero));
  EXPECT_FALSE(paths.allows(through, 2, one_missing, kGateZero));  // a branch did not process it
  EXPECT_FALSE(paths.allows(through, 2, one_more, kGateZero));
  EXPECT_FALSE(paths.allows(inside, 3, all, kGateZero));  // a branch NF in the ordered record
  uint8_t line[] = {0, 1, 2};
  Deployment plain = deployment_of({{"nfs", {node("a"), node("b"), node("c")}}});
  EXPECT_FALSE(ChainPaths(plain, plain.chains[0], gates_of)
                   .allows(line, 3, all, kGateZero));  // no group: nothing may be in the branch set
  EXPECT_TRUE(ChainPaths(plain, plain.chains[0], gates_of).allows(line, 3, none, kGateZero));
}

TEST(ChainPaths, NfsOutOfTopologicalOrderOrASecondEntryAreRefused) {
  EXPECT_THROW(deployment_of({{"nfs", {node("a"), node("b")}}, {"edges", {{{"from", "b"}, {"to", "a"}}}}}),
               std::runtime_error);
  EXPECT_THROW(deployment_of({{"nfs", {node("a"), node("b")}}, {"edges", json::array()}}), std::runtime_error);
}

}  // namespace
}  // namespace tandem
