// Tests of a chain appended to a deployment (a service's added chain): every index already given out stays what it
// was, the chain's NFs and rings take the next ones, too many chains are refused, and a service's pool keeps room
// (what it removed giving its room back).
#include <gtest/gtest.h>

#include "contract/deployment.h"
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

}  // namespace
}  // namespace tandem
