// Tests of the interface monitor: it samples real rte_ring occupancy on its TSC deadline only.
#include "interface_monitor.h"

#include <gtest/gtest.h>

namespace tandem::unis {
namespace {

TEST(InterfaceMonitor, SamplesOccupancyAndCapacityOnItsInterval) {
  rte_ring* ring =
      rte_ring_create("monitor_test", 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
  ASSERT_NE(ring, nullptr);
  std::vector<rte_ring*> rings = {ring};
  InterfaceMonitor monitor(rings, {{{0}}}, 1000);
  EXPECT_EQ(monitor.capacity(0), 1024u);

  void* objects[100];
  for (int i = 0; i < 100; i++) objects[i] = reinterpret_cast<void*>(static_cast<uintptr_t>(i + 1));
  ASSERT_EQ(rte_ring_enqueue_burst(ring, objects, 100, nullptr), 100u);
  EXPECT_TRUE(monitor.poll(5000));  // first poll: the timer starts expired
  EXPECT_EQ(monitor.occupancy()[0], 100u);

  ASSERT_EQ(rte_ring_dequeue_burst(ring, objects, 60, nullptr), 60u);
  EXPECT_FALSE(monitor.poll(5999));  // within the interval: the old sample stands
  EXPECT_EQ(monitor.occupancy()[0], 100u);
  EXPECT_TRUE(monitor.poll(6000));
  EXPECT_EQ(monitor.occupancy()[0], 40u);
  EXPECT_EQ(monitor.samples(), 2u);
  rte_ring_free(ring);
}

TEST(InterfaceMonitor, AJoinsInputIsItsRingsSumAndAFanOutsOutputItsFullestRing) {
  std::vector<rte_ring*> rings;
  for (int r = 0; r < 3; r++)
    rings.push_back(rte_ring_create(("monitor_join" + std::to_string(r)).c_str(), r == 2 ? 256 : 512, SOCKET_ID_ANY,
                                    RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ));
  InterfaceMonitor monitor(rings, {{{0, 1, 2}, false}, {{0, 1, 2}, true}, {{1}, false}}, 1000);
  EXPECT_EQ(monitor.capacity(0), 1280u);  // a sum holds all three
  EXPECT_EQ(monitor.capacity(1), 256u);   // the fullest refuses first at the smallest
  void* objects[100];
  for (int i = 0; i < 100; i++) objects[i] = reinterpret_cast<void*>(static_cast<uintptr_t>(i + 1));
  rte_ring_enqueue_burst(rings[0], objects, 10, nullptr);
  rte_ring_enqueue_burst(rings[1], objects, 30, nullptr);
  rte_ring_enqueue_burst(rings[2], objects, 20, nullptr);
  monitor.sample();
  EXPECT_EQ(monitor.occupancy(), (std::vector<uint32_t>{60, 30, 30}));
  EXPECT_EQ(monitor.ring_reads(), 3u);  // every ring once, whatever the interfaces
  rte_ring_enqueue_burst(rings[1], objects, 5, nullptr);
  monitor.sample(2);
  EXPECT_EQ(monitor.occupancy()[2], 35u);
  EXPECT_EQ(monitor.ring_reads(), 4u);
  for (rte_ring* ring : rings) rte_ring_free(ring);
}

}  // namespace
}  // namespace tandem::unis
