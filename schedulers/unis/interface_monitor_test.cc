// Tests of the interface monitor: it samples real rte_ring occupancy on its TSC deadline only.
#include "interface_monitor.h"

#include <gtest/gtest.h>

namespace tandem::unis {
namespace {

TEST(InterfaceMonitor, SamplesOccupancyAndCapacityOnItsInterval) {
  rte_ring* ring = rte_ring_create("monitor_test", 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
  ASSERT_NE(ring, nullptr);
  std::vector<rte_ring*> rings = {ring};
  InterfaceMonitor monitor(rings, 1000);
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

}  // namespace
}  // namespace tandem::unis
