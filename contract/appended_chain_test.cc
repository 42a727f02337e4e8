// Tests of a chain appended to a deployment (a service's added chain): every index already given out stays what it
// was, the chain's NFs and rings take the next ones, too many chains are refused (a service told why), a service's
// pool keeps room (what it removed giving its room back), and rings named apart keep their names.
#include <gtest/gtest.h>

#include "contract/deployment.h"
#include "contract/eal_args.h"
#include "contract/shm_layout.h"

namespace tandem {
namespace {

json chain_of(const std::string& name, std::vector<std::string> nfs) {
  json list = json::array();
  for (const std::string& nf : nfs) list.push_back({{"name", nf}, {"type", "macswap"}, {"core", 1}});
  return {{"name", name}, {"traffic", {{"sizes", {{64, 1.0}}}}}, {"ring_capacity", 1024}, {"nfs", list}};
}

TEST(AppendedChain, KeepsEveryIndexGivenOutAndTakesTheNextOnes) {
  Deployment d = parse_deployment({{"scheduler", {{"name", "coop"}}}, {"chains", {chain_of("a", {"a1", "a2"})}}});
  Deployment before = d;
  append_chain(d, chain_of("b", {"b1", "b2", "b3"}));
  ASSERT_EQ(d.chains.size(), 2u);
  for (size_t n = 0; n < before.nfs.size(); n++) EXPECT_EQ(d.nfs[n].name, before.nfs[n].name);
  for (size_t r = 0; r < before.rings.size(); r++) EXPECT_EQ(d.rings[r].name, before.rings[r].name);
  const ChainConfig& b = d.chains[1];
  EXPECT_EQ(b.index, 1);
  EXPECT_EQ(b.nfs, (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(b.entry_ring, static_cast<int>(before.rings.size()));  // entry, b1->b2, b2->b3, exit
  EXPECT_EQ(d.rings.size(), before.rings.size() + 4);
  for (int nf : b.nfs) EXPECT_EQ(d.nfs[nf].chain, 1);
}

TEST(AppendedChain, ADeploymentPastTheSharedMemorysChainsIsRefused) {
  Deployment d = parse_deployment({{"scheduler", {{"name", "coop"}}}, {"chains", {chain_of("c0", {"n0"})}}});
  for (int c = 1; c < kMaxChains; c++) append_chain(d, chain_of("c" + std::to_string(c), {"n" + std::to_string(c)}));
  EXPECT_THROW(append_chain(d, chain_of("one-too-many", {"x"})), std::runtime_error);
}

TEST(AppendedChain, AServicePastTheStatsZoneIsToldThatRemovedChainsKeepTheirPlaces) {
  // 30 chains of 4 NFs (120), 10 of them removed; a chain of 9 more would make 129 of the 128 NFs a service holds.
  Deployment d =
      parse_deployment({{"scheduler", {{"name", "coop"}}}, {"chains", {chain_of("c0", {"a", "b", "c", "d"})}}});
  for (int c = 1; c < 30; c++) {
    std::string p = std::to_string(c);
    append_chain(d, chain_of("c" + p, {"a" + p, "b" + p, "c" + p, "d" + p}));
  }
  std::vector<bool> removed(30, false);
  for (int c = 0; c < 10; c++) removed[c] = true;
  EXPECT_EQ(beyond_stats_zone(d, removed), std::nullopt);  // 120 NFs fit
  Deployment next = d;
  EXPECT_THROW(append_chain(next, chain_of("more", {"m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"})),
               std::runtime_error);
  std::optional<std::string> why = beyond_stats_zone(next, removed);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("room for 128 NFs"), std::string::npos) << *why;
  EXPECT_NE(why->find("would hold 129 NFs"), std::string::npos) << *why;
  EXPECT_NE(why->find("40 NFs of 10 removed chains"), std::string::npos) << *why;
  EXPECT_NE(why->find("restart the service"), std::string::npos) << *why;
  // Without removed chains the message does not speak of them.
  EXPECT_EQ(beyond_stats_zone(next, {}).value().find("removed"), std::string::npos);
}

TEST(AppendedChain, AServicesPoolKeepsRoomForAddedChains) {
  json doc = {{"scheduler", {{"name", "coop"}}}, {"chains", {chain_of("a", {"a1"})}}};
  unsigned run = mbuf_pool_size(parse_deployment(doc));
  doc["serve"] = true;
  EXPECT_EQ(mbuf_pool_size(parse_deployment(doc)), run + kServiceSpareMbufs);
}

TEST(AppendedChain, WhatAServiceRemovedNeedsNoRoomInItsPool) {
  // Chains and ports added and removed again and again (an operator placing a resource anew) must not use up the
  // room: a removed chain's rings were drained and its NFs stopped, a removed port's queues closed.
  json doc = {{"serve", true}, {"scheduler", {{"name", "coop"}}}, {"chains", {chain_of("a", {"a1"})}}};
  Deployment d = parse_deployment(doc);
  unsigned alone = mbuf_pool_size(d);
  append_chain(d, chain_of("b", {"b1", "b2"}));
  PortConfig port;
  port.index = 0;
  port.name = "w0";
  d.ports.push_back(port);
  EXPECT_GT(mbuf_pool_size(d), alone);
  EXPECT_EQ(mbuf_pool_size(d, {false, true}, {0}), alone);
  EXPECT_GT(mbuf_pool_size(d, {false, true}), alone);  // the port still counts
  EXPECT_EQ(mbuf_pool_size(d, {true, true}, {0}), 8192 + kServiceSpareMbufs);
}

// A refused chain may leave its rings under their index's names: the next chain's rings, named apart, keep their
// names through the deployment file that workers read (and restarted ones read again).
TEST(AppendedChain, RingsNamedApartKeepTheirNamesInTheDeploymentFile) {
  json original = {{"scheduler", {{"name", "coop"}}}, {"chains", {chain_of("a", {"a1"})}}};
  Deployment d = parse_deployment(original);
  append_chain(d, chain_of("b", {"b1"}));
  original["chains"].push_back(chain_of("b", {"b1"}));
  int entry = d.chains[1].entry_ring;
  d.rings[entry].object = "tandem_ring_" + std::to_string(entry) + ".1";
  Deployment read = parse_deployment(deployment_to_json(d, original));
  ASSERT_EQ(read.rings.size(), d.rings.size());
  for (const RingConfig& ring : read.rings) EXPECT_EQ(ring_object(ring), ring_object(d.rings[ring.index]));
  EXPECT_EQ(ring_object(read.rings[entry]), "tandem_ring_" + std::to_string(entry) + ".1");
  EXPECT_EQ(ring_object(read.rings[0]), "tandem_ring_0");
  json wrong = deployment_to_json(d, original);
  wrong["ring_objects"]["99"] = "x";
  EXPECT_THROW(parse_deployment(wrong), std::runtime_error);
}

}  // namespace
}  // namespace tandem
