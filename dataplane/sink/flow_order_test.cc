// Tests of the sink's per-flow order check: flows are told apart by their 5-tuple, and only a flow's own later
// packet makes an earlier one late.
#include "flow_order.h"

#include "dataplane/packets/packet_test_support.h"

namespace tandem {
namespace {

TEST(FlowOrder, APacketBehindALaterOneOfItsFlowIsReordered) {
  FlowOrder order;
  rte_mbuf* a = testing::make_frame(1);
  rte_mbuf* b = testing::make_frame(2);
  EXPECT_TRUE(order.in_order(a, 10));
  EXPECT_TRUE(order.in_order(b, 5));  // another flow: its numbers are its own business
  EXPECT_TRUE(order.in_order(a, 11));
  EXPECT_FALSE(order.in_order(a, 9));  // flow 1 delivered 11 already
  EXPECT_TRUE(order.in_order(b, 6));
  EXPECT_EQ(order.reordered(), 1u);
  testing::free_all({a, b});
}

}  // namespace
}  // namespace tandem
