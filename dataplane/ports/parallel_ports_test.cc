// Tests of a parallel group's ports: one mbuf to every branch, released once by the last marker (also under
// concurrent markers and out of order), a branch's drop frees nothing twice, and the join polls every edge.
#include "parallel_ports.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "contract/packet_meta.h"
#include "dataplane/packets/packet_test_support.h"
#include "ring_port.h"

namespace tandem {
namespace {

rte_ring* make_ring(const std::string& name, unsigned capacity) {
  return rte_ring_create(name.c_str(), capacity, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
}

std::vector<rte_mbuf*> take_all(rte_ring* ring) {
  std::vector<rte_mbuf*> out(rte_ring_count(ring));
  rte_ring_dequeue_bulk(ring, reinterpret_cast<void**>(out.data()), static_cast<unsigned>(out.size()), nullptr);
  return out;
}

// A parallel group of `width` branches over rings: branch rings (P -> branch), join rings (marker -> join).
struct Group {
  static inline StatsZone stats{};
  std::vector<rte_ring*> branch_rings, join_rings;
  uint64_t forked = 0;
  std::vector<uint64_t> merged, journals;

  // One branch per capacity: the ring from the branch point to it.
  Group(std::vector<unsigned> branch_capacities, unsigned join_capacity, const std::string& tag)
      : merged(branch_capacities.size(), 0), journals(branch_capacities.size(), 0) {
    stats = {};
    for (size_t b = 0; b < branch_capacities.size(); b++) {
      branch_rings.push_back(make_ring(tag + "b" + std::to_string(b), branch_capacities[b]));
      join_rings.push_back(make_ring(tag + "j" + std::to_string(b), join_capacity));
    }
  }
  ~Group() {
    for (rte_ring* ring : branch_rings) rte_ring_free(ring);
    for (rte_ring* ring : join_rings) rte_ring_free(ring);
  }
  BranchEgress branch() {
    std::vector<std::unique_ptr<EgressPort>> ports;
    for (size_t b = 0; b < branch_rings.size(); b++)
      ports.push_back(std::make_unique<RingEgress>(branch_rings[b], stats.rings[b], journals[b]));
    return BranchEgress(std::move(ports), forked);
  }
  MarkerEgress marker(size_t b) {
    return MarkerEgress(std::make_unique<RingEgress>(join_rings[b], stats.rings[64 + b], journals[b]), merged[b],
                        journals[b]);
  }
  JoinIngress join() {
    std::vector<std::unique_ptr<IngressPort>> edges;
    for (size_t b = 0; b < join_rings.size(); b++)
      edges.push_back(std::make_unique<RingIngress>(join_rings[b], stats.rings[64 + b]));
    return JoinIngress(std::move(edges));
  }
  // Everything the join can take, burst by burst.
  std::vector<rte_mbuf*> drain_join() {
    JoinIngress ingress = join();
    std::vector<rte_mbuf*> out;
    rte_mbuf* burst[32];
    while (uint16_t n = ingress.rx_burst(burst, 32)) out.insert(out.end(), burst, burst + n);
    return out;
  }
};

std::vector<rte_mbuf*> frames(size_t n) {
  std::vector<rte_mbuf*> out;
  for (size_t i = 0; i < n; i++) out.push_back(testing::make_frame(static_cast<uint32_t>(i)));
  return out;
}

TEST(ParallelPorts, EveryBranchGetsTheSameMbufAndTheLastMarkerReleasesItOnce) {
  Group group({64, 64}, 64, "once");
  std::vector<rte_mbuf*> pkts = frames(8);
  BranchEgress branch = group.branch();
  EXPECT_EQ(branch.tx_burst(pkts.data(), 8, nullptr), 16);  // 8 copies to each branch
  EXPECT_EQ(group.forked, 8u);
  std::vector<rte_mbuf*> a = take_all(group.branch_rings[0]), b = take_all(group.branch_rings[1]);
  EXPECT_EQ(a, pkts);
  EXPECT_EQ(b, pkts);  // the same mbufs, not copies
  EXPECT_EQ(rte_mbuf_refcnt_read(pkts[0]), 2);

  MarkerEgress first = group.marker(0), second = group.marker(1);
  EXPECT_EQ(first.tx_burst(a.data(), 8, nullptr), 0);  // branch 0 finished first: nothing complete yet
  EXPECT_EQ(group.merged[0], 8u);
  EXPECT_EQ(rte_mbuf_refcnt_read(pkts[0]), 1);  // its references dropped, the mbufs still held by branch 1
  EXPECT_EQ(rte_mempool_in_use_count(testing::test_pool()), 8u);
  EXPECT_EQ(second.tx_burst(b.data(), 8, nullptr), 8);
  EXPECT_EQ(group.merged[1], 0u);

  std::vector<rte_mbuf*> joined = group.drain_join();
  EXPECT_EQ(joined, pkts);
  rte_pktmbuf_free_bulk(joined.data(), static_cast<unsigned>(joined.size()));
  EXPECT_EQ(rte_mempool_in_use_count(testing::test_pool()), 0u);
  // In copies: generated + forked = delivered + dropped + merged.
  EXPECT_EQ(8 + group.forked, joined.size() + group.merged[0] + group.merged[1]);
}

TEST(ParallelPorts, PacketsCompleteOutOfOrderWhicheverBranchIsLast) {
  Group group({64, 64}, 64, "order");
  std::vector<rte_mbuf*> pkts = frames(8);
  BranchEgress branch = group.branch();
  branch.tx_burst(pkts.data(), 8, nullptr);
  std::vector<rte_mbuf*> a = take_all(group.branch_rings[0]), b = take_all(group.branch_rings[1]);
  MarkerEgress marker_a = group.marker(0), marker_b = group.marker(1);
  // Branch a is quick on the first half, branch b on the second: each half completes as soon as the slower
  // branch has it, not behind the other half.
  EXPECT_EQ(marker_a.tx_burst(a.data(), 4, nullptr), 0);
  EXPECT_EQ(marker_b.tx_burst(b.data() + 4, 4, nullptr), 0);
  EXPECT_EQ(marker_a.tx_burst(a.data() + 4, 4, nullptr), 4);  // the second half completes first
  EXPECT_EQ(take_all(group.join_rings[0]), std::vector<rte_mbuf*>(pkts.begin() + 4, pkts.end()));
  EXPECT_EQ(marker_b.tx_burst(b.data(), 4, nullptr), 4);
  std::vector<rte_mbuf*> rest = group.drain_join();
  EXPECT_EQ(rest, std::vector<rte_mbuf*>(pkts.begin(), pkts.begin() + 4));
  rte_pktmbuf_free_bulk(pkts.data(), 8);
  EXPECT_EQ(rte_mempool_in_use_count(testing::test_pool()), 0u);
}

TEST(ParallelPorts, ACopyDroppedInABranchIsNeverReleasedAndFreedOnce) {
  Group group({64, 4}, 64, "drop");  // branch 1's ring holds 4 of the 8
  std::vector<rte_mbuf*> pkts = frames(8);
  BranchEgress branch = group.branch();
  EXPECT_EQ(branch.tx_burst(pkts.data(), 8, nullptr), 12);
  EXPECT_EQ(Group::stats.rings[1].dropped_full, 4u);
  std::vector<rte_mbuf*> a = take_all(group.branch_rings[0]), b = take_all(group.branch_rings[1]);
  MarkerEgress marker_a = group.marker(0), marker_b = group.marker(1);
  EXPECT_EQ(marker_a.tx_burst(a.data(), 8, nullptr), 0);
  EXPECT_EQ(marker_b.tx_burst(b.data(), 4, nullptr), 4);
  std::vector<rte_mbuf*> joined = group.drain_join();
  EXPECT_EQ(joined, std::vector<rte_mbuf*>(pkts.begin(), pkts.begin() + 4));
  rte_pktmbuf_free_bulk(joined.data(), 4);
  EXPECT_EQ(rte_mempool_in_use_count(testing::test_pool()), 0u);  // the four that branch 1 lost went back once
  uint64_t dropped = Group::stats.rings[1].dropped_full;
  EXPECT_EQ(8 + group.forked, joined.size() + dropped + group.merged[0] + group.merged[1]);
}

TEST(ParallelPorts, ConcurrentMarkersReleaseEveryPacketExactlyOnce) {
  // Two branches (a 2-core machine runs both at once), every packet in the same order: both markers reach each
  // packet at about the same time.
  constexpr size_t kWidth = 2, kPackets = 4096, kRounds = 20;
  for (size_t round = 0; round < kRounds; round++) {
    Group group(std::vector<unsigned>(kWidth, kPackets), kPackets, "race" + std::to_string(round));
    std::vector<rte_mbuf*> pkts = frames(kPackets);
    BranchEgress branch = group.branch();
    for (size_t i = 0; i < kPackets; i += 32) branch.tx_burst(pkts.data() + i, 32, nullptr);
    std::vector<MarkerEgress> markers;
    for (size_t b = 0; b < kWidth; b++) markers.push_back(group.marker(b));
    std::vector<std::thread> branches;
    std::atomic<size_t> ready{0};
    for (size_t b = 0; b < kWidth; b++)
      branches.emplace_back([&, b] {
        // EAL pinned the test's main thread to one CPU, and threads inherit it: let the branches run apart.
        cpu_set_t every_cpu;
        CPU_ZERO(&every_cpu);
        for (long cpu = 0; cpu < sysconf(_SC_NPROCESSORS_ONLN) && cpu < CPU_SETSIZE; cpu++) CPU_SET(cpu, &every_cpu);
        pthread_setaffinity_np(pthread_self(), sizeof(every_cpu), &every_cpu);
        std::vector<rte_mbuf*> mine = take_all(group.branch_rings[b]);
        ready++;
        while (ready.load() < kWidth) {  // all start at once, so the markers overlap
        }
        for (size_t i = 0; i < mine.size(); i += 4) markers[b].tx_burst(mine.data() + i, 4, nullptr);
      });
    for (std::thread& t : branches) t.join();
    std::vector<rte_mbuf*> joined = group.drain_join();
    ASSERT_EQ(joined.size(), kPackets);
    EXPECT_EQ(std::set<rte_mbuf*>(joined.begin(), joined.end()), std::set<rte_mbuf*>(pkts.begin(), pkts.end()));
    uint64_t merged = 0;
    for (uint64_t m : group.merged) merged += m;
    EXPECT_EQ(merged, kPackets * (kWidth - 1));
    for (rte_mbuf* m : joined) EXPECT_EQ(rte_mbuf_refcnt_read(m), 1);
    rte_pktmbuf_free_bulk(joined.data(), static_cast<unsigned>(joined.size()));
    ASSERT_EQ(rte_mempool_in_use_count(testing::test_pool()), 0u);
  }
}

TEST(ParallelPorts, TheJoinTakesFromEveryEdgeStartingOneFurtherEachTime) {
  Group group({64, 64}, 64, "join");
  std::vector<rte_mbuf*> pkts = frames(8);
  for (size_t i = 0; i < 8; i++) rte_ring_enqueue(group.join_rings[i % 2], pkts[i]);
  JoinIngress join = group.join();
  EXPECT_EQ(join.waiting(), 8u);
  rte_mbuf* burst[8];
  ASSERT_EQ(join.rx_burst(burst, 2), 2);  // both from edge 0, which goes first this time
  EXPECT_EQ(burst[0], pkts[0]);
  EXPECT_EQ(burst[1], pkts[2]);
  ASSERT_EQ(join.rx_burst(burst, 1), 1);  // edge 1 goes first now
  EXPECT_EQ(burst[0], pkts[1]);
  group.drain_join();
  rte_pktmbuf_free_bulk(pkts.data(), 8);
}

}  // namespace
}  // namespace tandem
