// Tests of a chain appended to a deployment (a service's added chain): every index already given out stays what it
// was, the chain's NFs and rings take the next ones, too many chains are refused (a service told why), a removed
// chain's hop stamps and lcore ids are given again, a service's pool keeps room (what it removed giving its room
// back), and rings named apart keep their names.
#include <gtest/gtest.h>

#include <algorithm>

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

TEST(AppendedChain, ADeploymentPastWhatAServiceHoldsOverItsLifeIsRefused) {
  Deployment d = parse_deployment({{"scheduler", {{"name", "coop"}}}, {"chains", {chain_of("c0", {"n0"})}}});
  for (int c = 1; c < kLifetimeChains; c++)
    append_chain(d, chain_of("c" + std::to_string(c), {"n" + std::to_string(c)}));
  EXPECT_THROW(append_chain(d, chain_of("one-too-many", {"x"})), std::runtime_error);
  std::optional<std::string> why = beyond_stats_zone(d, std::vector<bool>(kLifetimeChains, true));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("over its life"), std::string::npos) << *why;
  EXPECT_NE(why->find("restart the service"), std::string::npos) << *why;
}

// 30 chains of 4 NFs (120), the first 10 removed: 80 run.
Deployment thirty_chains_of_four() {
  Deployment d =
      parse_deployment({{"scheduler", {{"name", "coop"}}}, {"chains", {chain_of("c0", {"a", "b", "c", "d"})}}});
  for (int c = 1; c < 30; c++) {
    std::string p = std::to_string(c);
    append_chain(d, chain_of("c" + p, {"a" + p, "b" + p, "c" + p, "d" + p}));
  }
  return d;
}

TEST(AppendedChain, ARemovedChainsPlacesAreFreeAgainAndWhatRunsAtOnceIsBounded) {
  Deployment d = thirty_chains_of_four();
  std::vector<bool> removed(30, false);
  for (int c = 0; c < 10; c++) removed[c] = true;
  Deployment next = d;
  std::vector<std::string> nine, forty_nine;
  for (int n = 0; n < 49; n++) (n < 9 ? nine : forty_nine).push_back("m" + std::to_string(n));
  for (int n = 0; n < 9; n++) forty_nine.push_back("x" + std::to_string(n));
  append_chain(next, chain_of("more", nine));  // 129 NFs in all, 89 of them running
  EXPECT_EQ(beyond_stats_zone(next, removed), std::nullopt);
  Deployment full = d;
  append_chain(full, chain_of("many", forty_nine));  // 80 running and 49 more
  std::optional<std::string> why = beyond_stats_zone(full, removed);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("holds 128 NFs"), std::string::npos) << *why;
  EXPECT_NE(why->find("at once"), std::string::npos) << *why;
  EXPECT_NE(why->find("would hold 129 NFs"), std::string::npos) << *why;
  EXPECT_NE(why->find("remove one first"), std::string::npos) << *why;
}

TEST(AppendedChain, AnAddedChainsNfsTakeTheStampsRemovedChainsGaveBack) {
  Deployment d = thirty_chains_of_four();
  std::vector<bool> removed(30, false);
  removed[1] = removed[3] = true;  // stamps 4-7 and 12-15 given back
  size_t first = d.nfs.size();
  append_chain(d, chain_of("new", {"n1", "n2", "n3", "n4", "n5", "n6"}));
  ASSERT_TRUE(give_hops(d, first, removed));
  std::vector<int> hops;
  for (size_t n = first; n < d.nfs.size(); n++) hops.push_back(d.nfs[n].hop);
  // The lowest free first: past the 120 the 30 chains hold, 4-7 and 12-15 are free, and so are 120-127.
  EXPECT_EQ(hops, (std::vector<int>{4, 5, 6, 7, 12, 13}));
  // Through the deployment file the workers read, each NF keeps its stamp.
  Deployment read = parse_deployment(deployment_to_json(d, [&] {
    json doc = {{"scheduler", {{"name", "coop"}}}, {"chains", json::array()}};
    for (const ChainConfig& chain : d.chains) {
      std::vector<std::string> names;
      for (int nf : chain.nfs) names.push_back(d.nfs[nf].name);
      doc["chains"].push_back(chain_of(chain.name, names));
    }
    return doc;
  }()));
  for (size_t n = 0; n < d.nfs.size(); n++) EXPECT_EQ(read.nfs[n].hop, d.nfs[n].hop) << d.nfs[n].name;
  // None is free where every stamp is held by a running NF.
  Deployment busy = thirty_chains_of_four();
  first = busy.nfs.size();
  append_chain(busy, chain_of("nine", {"z1", "z2", "z3", "z4", "z5", "z6", "z7", "z8", "z9"}));
  EXPECT_FALSE(give_hops(busy, first, std::vector<bool>(30, false)));
}

TEST(AppendedChain, AnAddedChainsProcessesTakeTheLcoreIdsRemovedChainsGaveBackButAKilledOnes) {
  Deployment d = thirty_chains_of_four();
  auto process_of = [&](std::vector<int> nfs) {
    WorkerPlan plan;
    plan.index = static_cast<int>(d.workers.size());
    plan.lcore_id = plan.index + 1;
    plan.core = 1;
    plan.segments.push_back({.nfs = std::move(nfs)});
    return plan;
  };
  for (int c = 0; c < 30; c++) d.workers.push_back(process_of(d.chains[c].nfs));  // lcore ids 1-30
  std::vector<bool> removed(30, false), killed(30, false);
  removed[2] = removed[5] = removed[6] = true;  // lcore ids 3, 6 and 7 given back
  killed[5] = true;                             // but 6: its process was killed
  size_t first = d.workers.size();
  append_chain(d, chain_of("new", {"n1", "n2", "n3"}));
  for (int nf : d.chains.back().nfs) d.workers.push_back(process_of({nf}));
  ASSERT_TRUE(give_lcore_ids(d, first, removed, killed));
  EXPECT_EQ(d.workers[first].lcore_id, 3);
  EXPECT_EQ(d.workers[first + 1].lcore_id, 7);
  EXPECT_EQ(d.workers[first + 2].lcore_id, 31);
  // A running process keeps its lcore id in a module's plan numbered anew.
  std::vector<WorkerPlan> planned(d.workers.begin(), d.workers.end());
  std::reverse(planned.begin(), planned.end());
  std::vector<WorkerPlan> ordered = in_running_order(planned, d.workers);
  for (size_t w = 0; w < ordered.size(); w++) EXPECT_EQ(ordered[w].lcore_id, d.workers[w].lcore_id) << w;
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
