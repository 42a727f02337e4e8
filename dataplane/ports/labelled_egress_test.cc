// Tests of the labelled egress port: packets follow their gate's edge in order; a gate with no edge is a counted miss.
#include "labelled_egress.h"

#include <vector>

#include "contract/packet_meta.h"
#include "dataplane/packets/packet_test_support.h"
#include "ring_port.h"

namespace tandem {
namespace {

struct Edges {
  static inline StatsZone stats{};
  rte_ring* zero = rte_ring_create("gate0", 8, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
  rte_ring* one = rte_ring_create("gate1", 4, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
  uint64_t journal = 0, label_miss = 0;

  Edges() { stats = {}; }
  ~Edges() {
    drain(zero);
    drain(one);
    rte_ring_free(zero);
    rte_ring_free(one);
  }
  // Gate 0 and gate 1 have edges; gate 2 has none.
  LabelledEgress port() {
    std::vector<std::unique_ptr<EgressPort>> by_gate;
    by_gate.push_back(std::make_unique<RingEgress>(zero, stats.rings[0], journal));
    by_gate.push_back(std::make_unique<RingEgress>(one, stats.rings[1], journal));
    by_gate.push_back(nullptr);
    return LabelledEgress(std::move(by_gate), label_miss, journal);
  }
  static std::vector<rte_mbuf*> drain(rte_ring* ring) {
    std::vector<rte_mbuf*> out(rte_ring_count(ring));
    rte_ring_dequeue_bulk(ring, reinterpret_cast<void**>(out.data()), static_cast<unsigned>(out.size()), nullptr);
    for (rte_mbuf* m : out) rte_pktmbuf_free(m);
    return out;
  }
};

TEST(LabelledEgress, EachPacketFollowsItsGateInOrderAndAMissIsCounted) {
  Edges edges;
  LabelledEgress port = edges.port();
  std::vector<rte_mbuf*> frames;
  for (int i = 0; i < 7; i++) frames.push_back(testing::make_frame(i));
  const uint8_t gates[] = {0, 1, 0, 2, 1, 9, 0};  // 2: no edge; 9: beyond the node's gates
  EXPECT_EQ(port.tx_burst(frames.data(), 7, gates), 5);
  EXPECT_EQ(edges.label_miss, 2u);
  EXPECT_EQ(edges.journal, 0u);
  EXPECT_EQ(Edges::drain(edges.zero), (std::vector<rte_mbuf*>{frames[0], frames[2], frames[6]}));
  EXPECT_EQ(Edges::drain(edges.one), (std::vector<rte_mbuf*>{frames[1], frames[4]}));
  EXPECT_EQ(rte_mempool_in_use_count(testing::test_pool()), 0u);  // the misses were freed by the port
}

TEST(LabelledEgress, TheGateGoesBesideTheHopOfTheNfThatChoseIt) {
  Edges edges;
  LabelledEgress port = edges.port();
  rte_mbuf* frame = testing::make_frame(0);
  clear_hops(meta_of(frame));
  stamp_hop(frame, 3);
  stamp_hop(frame, 5);  // the classifier, whose egress this is
  meta_of(frame)->hop_gates[0] = 9;
  const uint8_t gate[] = {1};
  EXPECT_EQ(port.tx_burst(&frame, 1, gate), 1);
  EXPECT_EQ(meta_of(frame)->hop_gates[1], 1);
  EXPECT_EQ(meta_of(frame)->hop_gates[0], 9);  // an earlier hop's is left alone
}

TEST(LabelledEgress, WithoutGatesEverythingTakesGateZero) {
  Edges edges;
  LabelledEgress port = edges.port();
  std::vector<rte_mbuf*> frames = {testing::make_frame(0), testing::make_frame(1)};
  EXPECT_EQ(port.tx_burst(frames.data(), 2, nullptr), 2);
  EXPECT_EQ(rte_ring_count(edges.zero), 2u);
  EXPECT_EQ(edges.label_miss, 0u);
}

TEST(LabelledEgress, AFullEdgeDropsOnlyItsOwnPacketsAsItsRingsAndRoomIsTheLeast) {
  Edges edges;
  LabelledEgress port = edges.port();
  EXPECT_EQ(port.room(), 4u);  // gate 1's ring holds 4
  std::vector<rte_mbuf*> frames;
  std::vector<uint8_t> gates;
  for (int i = 0; i < 9; i++) {
    frames.push_back(testing::make_frame(i));
    gates.push_back(i < 6 ? 1 : 0);
  }
  EXPECT_EQ(port.tx_burst(frames.data(), 9, gates.data()), 7);  // 4 of gate 1's 6, all 3 of gate 0's
  EXPECT_EQ(Edges::stats.rings[1].dropped_full, 2u);
  EXPECT_EQ(Edges::stats.rings[0].dropped_full, 0u);
  EXPECT_EQ(edges.label_miss, 0u);
}

}  // namespace
}  // namespace tandem
