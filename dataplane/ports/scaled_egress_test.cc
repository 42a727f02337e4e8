// Tests of the scaled egress port: flows follow the instance count the manager asks for, a moved flow waits for its
// old instance and the next stage, so no flow is reordered and nothing is lost; a full hold drops and counts.
#include "scaled_egress.h"

#include <map>
#include <vector>

#include "dataplane/packets/five_tuple.h"
#include "dataplane/packets/packet_test_support.h"

namespace tandem {
namespace {

// Two instances, each with a ring in and a ring out, which the test moves packets through by hand: an instance
// "runs" when the test passes its packets on, the next stage "runs" when the test takes from the out-rings.
struct Stage {
  static inline StatsZone stats{};
  std::vector<rte_ring*> in, out;
  uint64_t journal = 0;
  std::map<rte_mbuf*, std::pair<uint32_t, uint32_t>> flow_and_seq;
  std::vector<rte_mbuf*> next_stage_took;

  // `second_in`: the size of the ring into instance 1.
  explicit Stage(unsigned second_in = 1024) {
    stats = {};
    for (int k = 0; k < 2; k++) {
      in.push_back(ring("in" + std::to_string(k), k == 1 ? second_in : 1024));
      out.push_back(ring("out" + std::to_string(k)));
    }
  }
  ~Stage() {
    for (rte_ring* r : in) drain_free(r);
    for (rte_ring* r : out) drain_free(r);
    for (rte_mbuf* m : next_stage_took) rte_pktmbuf_free(m);
  }
  static rte_ring* ring(const std::string& name, unsigned size = 1024) {
    return rte_ring_create(("scaled_" + name).c_str(), size, SOCKET_ID_ANY,
                           RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
  }
  static void drain_free(rte_ring* r) {
    void* m;
    while (rte_ring_dequeue(r, &m) == 0) rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
    rte_ring_free(r);
  }
  std::unique_ptr<ScaledEgress> port(size_t hold) {
    std::vector<ScaledInstance> instances;
    for (int k = 0; k < 2; k++)
      instances.push_back({std::make_unique<RingEgress>(in[k], stats.rings[k], journal),
                           &stats.rings[k],
                           {&stats.rings[k]},
                           {&stats.rings[2 + k]},
                           &stats.nfs[k]});
    return std::make_unique<ScaledEgress>(std::move(instances), stats.scale[0], 0, journal, hold);
  }
  // One packet each of flows 0..flows-1, numbered in each flow.
  void send(ScaledEgress& port, uint32_t flows, uint32_t seq) {
    std::vector<rte_mbuf*> burst;
    for (uint32_t flow = 0; flow < flows; flow++) {
      burst.push_back(testing::make_frame(flow));
      flow_and_seq[burst.back()] = {flow, seq};
    }
    port.tx_burst(burst.data(), static_cast<uint16_t>(burst.size()), nullptr);
  }
  void instance_runs(int k) {
    void* m;
    while (rte_ring_dequeue(in[k], &m) == 0) {
      counter_add(stats.rings[k].dequeued, uint64_t{1});
      counter_add(stats.nfs[k].packets_in, uint64_t{1});
      ASSERT_EQ(rte_ring_enqueue(out[k], m), 0);
      counter_add(stats.rings[2 + k].enqueued, uint64_t{1});
    }
  }
  void next_stage_runs() {
    for (int k = 0; k < 2; k++) {
      void* m;
      while (rte_ring_dequeue(out[k], &m) == 0) {
        counter_add(stats.rings[2 + k].dequeued, uint64_t{1});
        next_stage_took.push_back(static_cast<rte_mbuf*>(m));
      }
    }
  }
  // Each flow's packets reached the next stage in the order they were sent (the tests count what was lost).
  void expect_every_flow_in_order() {
    std::map<uint32_t, int64_t> last;
    for (rte_mbuf* m : next_stage_took) {
      auto [flow, seq] = flow_and_seq.at(m);
      auto [before, first] = last.try_emplace(flow, -1);
      EXPECT_GT(static_cast<int64_t>(seq), before->second) << "flow " << flow << " reordered";
      before->second = seq;
    }
  }
};

constexpr uint32_t kFlows = 32;

TEST(ScaledEgress, AMovedFlowWaitsForItsOldInstanceAndTheNextStage) {
  Stage stage;
  auto port = stage.port(4096);
  stage.send(*port, kFlows, 0);
  EXPECT_EQ(rte_ring_count(stage.in[1]), 0u);  // one instance in use: every flow on instance 0
  EXPECT_EQ(counter_read(Stage::stats.scale[0].feeders[0].in_use), 1u);

  flag_store(Stage::stats.scale[0].wanted, 2u);
  stage.send(*port, kFlows, 1);
  EXPECT_EQ(rte_ring_count(stage.in[1]), 0u);  // instance 0 still has the moved flows' packet 0
  size_t moved = port->held();
  EXPECT_GT(moved, 0u);
  EXPECT_LT(moved, kFlows);  // the flows that stay flow on meanwhile
  EXPECT_EQ(rte_ring_count(stage.in[0]), kFlows + (kFlows - moved));

  stage.instance_runs(0);
  stage.send(*port, kFlows, 2);  // instance 0 handed them on, but they are still on its out-ring
  EXPECT_EQ(port->held(), 2 * moved);
  EXPECT_EQ(port->in_use(), 1u);

  stage.next_stage_runs();
  stage.send(*port, kFlows, 3);  // now they can go: the held ones first, in order
  EXPECT_EQ(port->in_use(), 2u);
  EXPECT_EQ(port->held(), 0u);
  EXPECT_EQ(counter_read(Stage::stats.scale[0].feeders[0].in_use), 2u);
  EXPECT_EQ(rte_ring_count(stage.in[1]), 3 * moved);
  EXPECT_EQ(counter_read(Stage::stats.scale[0].feeders[0].held_peak), 2 * moved);

  stage.instance_runs(1);
  stage.instance_runs(0);
  stage.next_stage_runs();
  EXPECT_EQ(stage.next_stage_took.size(), 4 * kFlows);  // nothing lost
  stage.expect_every_flow_in_order();
}

TEST(ScaledEgress, ScalingInMovesTheLastInstancesFlowsBackWithoutReordering) {
  Stage stage;
  auto port = stage.port(4096);
  flag_store(Stage::stats.scale[0].wanted, 2u);
  stage.send(*port, kFlows, 0);  // no packet was sent before: the change is immediate
  ASSERT_EQ(port->in_use(), 2u);
  EXPECT_GT(rte_ring_count(stage.in[1]), 0u);

  flag_store(Stage::stats.scale[0].wanted, 1u);
  stage.send(*port, kFlows, 1);
  size_t moved = port->held();
  EXPECT_EQ(moved, rte_ring_count(stage.in[1]));  // exactly instance 1's flows wait
  stage.instance_runs(0);
  stage.instance_runs(1);
  stage.next_stage_runs();
  stage.send(*port, kFlows, 2);
  EXPECT_EQ(port->in_use(), 1u);
  EXPECT_EQ(rte_ring_count(stage.in[1]), 0u);
  stage.instance_runs(0);
  stage.next_stage_runs();
  EXPECT_EQ(stage.next_stage_took.size(), 3 * kFlows);
  stage.expect_every_flow_in_order();
  EXPECT_EQ(counter_read(Stage::stats.scale[0].feeders[0].switches), 2u);
}

TEST(ScaledEgress, AHoldLargerThanTheNewRingGoesOnAsItMakesRoomAlsoWithoutNewPacketsAndNothingOvertakesIt) {
  Stage stage(kFlows);  // room for every flow's next packet, not for the hold
  auto port = stage.port(4096);
  stage.send(*port, kFlows, 0);
  flag_store(Stage::stats.scale[0].wanted, 2u);
  constexpr uint32_t kHeldRounds = 10;
  for (uint32_t seq = 1; seq <= kHeldRounds; seq++) stage.send(*port, kFlows, seq);
  size_t moved = port->held();
  ASSERT_GT(moved, kFlows);  // more than instance 1's ring holds
  stage.instance_runs(0);
  stage.next_stage_runs();
  port->flush();  // no new packet: the change is made all the same, and the ring filled, not overfilled
  EXPECT_EQ(port->in_use(), 2u);
  EXPECT_EQ(rte_ring_count(stage.in[1]), kFlows);
  EXPECT_EQ(port->held(), moved - kFlows);
  // The moved flows' next packets would queue behind their backlog, which already exceeds the room in the ring:
  // they are dropped as a full ring drops them (the instance is overloaded), not held.
  size_t moved_flows = moved / kHeldRounds;
  stage.send(*port, kFlows, kHeldRounds + 1);
  EXPECT_EQ(port->held(), moved - kFlows);
  EXPECT_EQ(counter_read(Stage::stats.rings[1].dropped_full), moved_flows);
  for (int round = 0; round < 100 && port->held() > 0; round++) {
    stage.instance_runs(1);
    port->flush();
  }
  EXPECT_EQ(port->held(), 0u);
  EXPECT_EQ(counter_read(Stage::stats.scale[0].feeders[0].held_now), 0u);
  stage.instance_runs(1);
  stage.send(*port, kFlows, kHeldRounds + 2);  // backlog gone: every flow straight to its instance
  EXPECT_EQ(port->held(), 0u);
  stage.instance_runs(0);
  stage.instance_runs(1);
  stage.next_stage_runs();
  EXPECT_EQ(stage.next_stage_took.size(), (kHeldRounds + 3) * kFlows - moved_flows);  // no held packet lost
  EXPECT_EQ(counter_read(Stage::stats.scale[0].feeders[0].held_dropped), 0u);
  stage.expect_every_flow_in_order();
}

TEST(ScaledEgress, AFullHoldDropsAndCountsAtTheRingAndWhatIsHeldAtStopIsCounted) {
  Stage stage;
  uint64_t dropped_before = 0;
  {
    auto port = stage.port(4);
    stage.send(*port, kFlows, 0);
    flag_store(Stage::stats.scale[0].wanted, 2u);
    stage.send(*port, kFlows, 1);
    size_t moved = kFlows - (rte_ring_count(stage.in[0]) - kFlows);
    ASSERT_GT(moved, 4u);
    EXPECT_EQ(port->held(), 4u);
    EXPECT_EQ(counter_read(Stage::stats.scale[0].feeders[0].held_dropped), moved - 4);
    EXPECT_EQ(counter_read(Stage::stats.rings[1].dropped_full), moved - 4);  // counted at the ring they were for
    dropped_before = moved - 4;
  }  // the worker stops with 4 held: they are dropped and counted too
  EXPECT_EQ(counter_read(Stage::stats.rings[1].dropped_full), dropped_before + 4);
  EXPECT_EQ(counter_read(Stage::stats.scale[0].feeders[0].held_dropped), dropped_before + 4);
}

}  // namespace
}  // namespace tandem
