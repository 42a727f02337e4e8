// Tests of the load-balanced egress port: round-robin takes turns across bursts; flow hash keeps a flow on one instance, in order.
#include "load_balanced_egress.h"

#include <map>
#include <set>
#include <vector>

#include "nfs/nf_test_support.h"
#include "ring_port.h"

namespace tandem {
namespace {

struct Instances {
  static inline StatsZone stats{};
  std::vector<rte_ring*> rings;
  uint64_t journal = 0;

  explicit Instances(size_t n) {
    stats = {};
    for (size_t i = 0; i < n; i++)
      rings.push_back(rte_ring_create(("instance" + std::to_string(i)).c_str(), 512, SOCKET_ID_ANY,
                                      RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ));
  }
  ~Instances() {
    for (rte_ring* ring : rings) {
      for (rte_mbuf* m : take(ring)) rte_pktmbuf_free(m);
      rte_ring_free(ring);
    }
  }
  LoadBalancedEgress port(Balance balance) {
    std::vector<std::unique_ptr<EgressPort>> ports;
    for (size_t i = 0; i < rings.size(); i++) ports.push_back(std::make_unique<RingEgress>(rings[i], stats.rings[i], journal));
    return LoadBalancedEgress(std::move(ports), balance);
  }
  static std::vector<rte_mbuf*> take(rte_ring* ring) {
    std::vector<rte_mbuf*> out(rte_ring_count(ring));
    rte_ring_dequeue_bulk(ring, reinterpret_cast<void**>(out.data()), static_cast<unsigned>(out.size()), nullptr);
    return out;
  }
};

TEST(LoadBalancedEgress, RoundRobinTakesTurnsPacketByPacketAcrossBursts) {
  Instances instances(3);
  LoadBalancedEgress port = instances.port(Balance::RoundRobin);
  std::vector<rte_mbuf*> frames;
  for (int i = 0; i < 12; i++) frames.push_back(testing::make_frame(0));  // one flow: round-robin ignores flows
  EXPECT_EQ(port.tx_burst(frames.data(), 7, nullptr), 7);
  EXPECT_EQ(port.tx_burst(frames.data() + 7, 5, nullptr), 5);  // the turn goes on where the last burst left it
  for (size_t i = 0; i < 3; i++) {
    std::vector<rte_mbuf*> got = Instances::take(instances.rings[i]);
    ASSERT_EQ(got.size(), 4u);
    for (size_t k = 0; k < got.size(); k++) EXPECT_EQ(got[k], frames[i + 3 * k]);
    for (rte_mbuf* m : got) rte_pktmbuf_free(m);
  }
}

TEST(LoadBalancedEgress, FlowHashKeepsEveryFlowOnOneInstanceInOrder) {
  Instances instances(4);
  LoadBalancedEgress port = instances.port(Balance::FlowHash);
  constexpr uint32_t kFlows = 64, kRounds = 4;
  std::map<rte_mbuf*, std::pair<uint32_t, uint32_t>> flow_and_round;
  for (uint32_t round = 0; round < kRounds; round++) {  // the flows interleaved, one packet each per burst
    std::vector<rte_mbuf*> burst;
    for (uint32_t flow = 0; flow < kFlows; flow++) {
      burst.push_back(testing::make_frame(flow));
      flow_and_round[burst.back()] = {flow, round};
    }
    EXPECT_EQ(port.tx_burst(burst.data(), kFlows, nullptr), kFlows);
  }
  std::map<uint32_t, size_t> instance_of_flow;
  std::set<size_t> used;
  for (size_t i = 0; i < instances.rings.size(); i++) {
    std::map<uint32_t, uint32_t> next_round;
    for (rte_mbuf* m : Instances::take(instances.rings[i])) {
      auto [flow, round] = flow_and_round.at(m);
      auto [it, first] = instance_of_flow.emplace(flow, i);
      EXPECT_EQ(it->second, i) << "flow " << flow << " on two instances";
      EXPECT_EQ(round, next_round[flow]++) << "flow " << flow << " out of order";
      EXPECT_EQ(port.flow_instance(m), i);
      used.insert(i);
      rte_pktmbuf_free(m);
    }
  }
  EXPECT_EQ(instance_of_flow.size(), kFlows);
  EXPECT_GT(used.size(), 1u);  // the hash spreads 64 flows (deterministic: the same frames give the same hash)
}

TEST(LoadBalancedEgress, AFrameThatIsNotIpv4GoesToInstanceZero) {
  Instances instances(3);
  LoadBalancedEgress port = instances.port(Balance::FlowHash);
  rte_mbuf* m = testing::make_frame(5);
  rte_pktmbuf_mtod(m, rte_ether_hdr*)->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
  EXPECT_EQ(port.flow_instance(m), 0u);
  rte_pktmbuf_free(m);
}

}  // namespace
}  // namespace tandem
