// Tests of NFVnice's watermark hysteresis and of which chains and NFs it throttles.
#include "backpressure.h"

#include <gtest/gtest.h>

namespace tandem::nfvnice {
namespace {

// Chain "c" of three NFs a -> b -> d (rings: entry, a->b, b->d, exit), and chain "o" of one NF.
Deployment two_chains() {
  json doc = {{"name", "t"},
              {"scheduler", {{"name", "nfvnice"}}},
              {"chains",
               {{{"name", "c"},
                 {"traffic", {{"sizes", {{64, 1}}}}},
                 {"ring_capacity", 100},
                 {"nfs",
                  {{{"name", "a"}, {"type", "cost"}, {"core", 1}},
                   {{"name", "b"}, {"type", "cost"}, {"core", 1}},
                   {{"name", "d"}, {"type", "cost"}, {"core", 1}}}}},
                {{"name", "o"},
                 {"traffic", {{"sizes", {{64, 1}}}}},
                 {"ring_capacity", 100},
                 {"nfs", {{{"name", "x"}, {"type", "cost"}, {"core", 1}}}}}}}};
  return parse_deployment(doc);
}

TEST(Backpressure, Watermarks) {
  EXPECT_EQ(watermark(2048, 0.8, true), 1639u);
  EXPECT_EQ(watermark(2048, 0.6, false), 1228u);
}

TEST(Backpressure, HysteresisBetweenHighAndLow) {
  Deployment d = two_chains();
  Backpressure bp(d, 0.8, 0.6);
  std::vector<uint32_t> occupancy(d.rings.size(), 0);
  int b_to_d = d.chains[0].rings[2];
  occupancy[b_to_d] = 79;
  EXPECT_FALSE(bp.update(occupancy));
  EXPECT_FALSE(bp.entry_closed(0));
  EXPECT_FALSE(bp.any_ring_congested());
  occupancy[b_to_d] = 80;
  EXPECT_TRUE(bp.update(occupancy));
  EXPECT_TRUE(bp.ring_congested(b_to_d));
  occupancy[b_to_d] = 61;  // between the watermarks: stays congested
  EXPECT_FALSE(bp.update(occupancy));
  EXPECT_TRUE(bp.entry_closed(0));
  EXPECT_TRUE(bp.any_ring_congested());
  occupancy[b_to_d] = 60;
  EXPECT_TRUE(bp.update(occupancy));
  EXPECT_FALSE(bp.entry_closed(0));
  EXPECT_FALSE(bp.any_ring_congested());
  occupancy[b_to_d] = 70;  // below high again: no new episode
  EXPECT_FALSE(bp.update(occupancy));
  EXPECT_EQ(bp.episodes(), 1u);
}

TEST(Backpressure, AnyRingCongestedUntilTheLastOneClears) {
  Deployment d = two_chains();
  Backpressure bp(d, 0.8, 0.6);
  std::vector<uint32_t> occupancy(d.rings.size(), 0);
  const int first = d.chains[0].rings[2], second = d.chains[1].rings[0];
  occupancy[first] = occupancy[second] = 80;
  bp.update(occupancy);
  occupancy[first] = 0;  // one clears, the other holds
  bp.update(occupancy);
  EXPECT_TRUE(bp.any_ring_congested());
  occupancy[second] = 0;
  bp.update(occupancy);
  EXPECT_FALSE(bp.any_ring_congested());
}

TEST(Backpressure, ThrottlesOnlyUpstreamNfsOfTheCongestedChain) {
  Deployment d = two_chains();
  Backpressure bp(d, 0.8, 0.6);
  std::vector<uint32_t> occupancy(d.rings.size(), 0);
  occupancy[d.chains[0].rings[2]] = 90;  // d's input
  bp.update(occupancy);
  EXPECT_TRUE(bp.entry_closed(0));
  EXPECT_FALSE(bp.entry_closed(1)) << "the other chain keeps receiving";
  EXPECT_TRUE(bp.nf_throttled(0));  // a
  EXPECT_TRUE(bp.nf_throttled(1));  // b
  EXPECT_FALSE(bp.nf_throttled(2)) << "the bottleneck itself runs to drain its queue";
  EXPECT_FALSE(bp.nf_throttled(3));
}

TEST(Backpressure, ProducerThrottleHoldsOnlyTheNfThatWritesTheCongestedRing) {
  Deployment d = two_chains();
  Backpressure bp(d, 0.8, 0.6, Backpressure::Throttle::Producer);
  std::vector<uint32_t> occupancy(d.rings.size(), 0);
  occupancy[d.chains[0].rings[2]] = 90;  // d's input, written by b
  EXPECT_TRUE(bp.update(occupancy));
  EXPECT_TRUE(bp.entry_closed(0)) << "the chain still sheds at its entry";
  EXPECT_FALSE(bp.nf_throttled(0)) << "a runs on: its output ring has room for what it already took";
  EXPECT_TRUE(bp.nf_throttled(1));
  EXPECT_FALSE(bp.nf_throttled(2));
  occupancy[d.chains[0].rings[1]] = 90;  // b's input fills in turn: a stops too
  EXPECT_TRUE(bp.update(occupancy));
  EXPECT_TRUE(bp.nf_throttled(0));
}

TEST(Backpressure, CongestedEntryClosesTheEntryButThrottlesNoNf) {
  Deployment d = two_chains();
  Backpressure bp(d, 0.8, 0.6);
  std::vector<uint32_t> occupancy(d.rings.size(), 0);
  occupancy[d.chains[1].rings[0]] = 100;
  bp.update(occupancy);
  EXPECT_TRUE(bp.entry_closed(1));
  EXPECT_FALSE(bp.nf_throttled(3));
}

TEST(Backpressure, TheFurthestCongestedRingDecides) {
  Deployment d = two_chains();
  Backpressure bp(d, 0.8, 0.6);
  std::vector<uint32_t> occupancy(d.rings.size(), 0);
  occupancy[d.chains[0].rings[1]] = 95;  // b's input
  occupancy[d.chains[0].rings[2]] = 95;  // d's input
  bp.update(occupancy);
  EXPECT_TRUE(bp.nf_throttled(1));
  occupancy[d.chains[0].rings[2]] = 10;  // d drained; b's input still congested
  bp.update(occupancy);
  EXPECT_TRUE(bp.nf_throttled(0));
  EXPECT_FALSE(bp.nf_throttled(1));
  EXPECT_TRUE(bp.entry_closed(0));
}

}  // namespace
}  // namespace tandem::nfvnice
