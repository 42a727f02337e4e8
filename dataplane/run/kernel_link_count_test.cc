// Tests of a kernel link's end-of-run count: every frame sent is taken, queued, dropped by the socket or lost
// before it, and counts that cannot be right are said to be so.
#include "kernel_link_count.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

RingCounters link(uint64_t sent, uint64_t taken, uint64_t arrived, uint64_t full, uint64_t foreign = 0,
                  bool counted = true) {
  RingCounters c{};
  c.enqueued = sent;
  c.dequeued = taken;
  c.socket_arrived = arrived;
  c.socket_dropped = full;
  c.foreign = foreign;
  c.socket_counted = counted ? 1 : 0;
  return c;
}

TEST(KernelLinkCount, SplitsWhatWasNotTaken) {
  KernelLinkCount count = count_kernel_link(link(1000, 900, 990, 60), true);
  ASSERT_TRUE(count.exact);
  EXPECT_EQ(count.socket_full, 60u);
  EXPECT_EQ(count.in_socket, 30u);           // arrived 990 = taken 900 + dropped 60 + queued 30
  EXPECT_EQ(count.lost_before_socket, 10u);  // sent 1000, arrived 990
  EXPECT_EQ(count.dropped() + count.in_socket + 900, 1000u);
}

TEST(KernelLinkCount, AKilledSendersUncountedFramesAreWhatItsReceiverCountedBeyondThem) {
  // Killed after the kernel took 8 frames and before it counted them: the receiver took them all.
  EXPECT_EQ(sends_not_counted(link(45292, 45300, 45300, 0)), 8u);
  EXPECT_EQ(sends_not_counted(link(45292, 45290, 45303, 0, 3)), 8u);     // foreign frames are not the run's
  EXPECT_EQ(sends_not_counted(link(45292, 45300, 0, 0, 0, false)), 8u);  // a killed receiver: what it took
  EXPECT_EQ(sends_not_counted(link(1000, 900, 990, 60)), 0u);            // a sender that counted: nothing
  KernelLinkCount caught_up = count_kernel_link(link(45300, 45300, 45300, 0), true);
  EXPECT_TRUE(caught_up.exact);
}

TEST(KernelLinkCount, ForeignFramesAreNotThePackets) {
  // Three frames not of the run reached the socket too, and were taken and freed by the receiver.
  KernelLinkCount count = count_kernel_link(link(100, 100, 103, 0, 3), true);
  ASSERT_TRUE(count.exact);
  EXPECT_EQ(count.in_socket, 0u);
  EXPECT_EQ(count.lost_before_socket, 0u);
}

TEST(KernelLinkCount, TheSinksPortCountsWhatNeverCameAsLost) {
  KernelLinkCount count = count_kernel_link(link(500, 480, 0, 0, 0, false), false);
  ASSERT_TRUE(count.exact);
  EXPECT_EQ(count.lost_before_socket, 20u);
  EXPECT_EQ(count.in_socket, 0u);
}

TEST(KernelLinkCount, WhatAKilledReceiverDidNotTakeWentWithIt) {
  KernelLinkCount count = count_kernel_link(link(500, 480, 0, 0, 0, false), true);
  ASSERT_TRUE(count.exact);
  EXPECT_EQ(count.lost_with_receiver, 20u);
  EXPECT_EQ(count.dropped(), 20u);
  EXPECT_EQ(count.in_socket, 0u);
}

TEST(KernelLinkCount, ARestartedReceiversSocketCountsFromItsStart) {
  // The dead process took 400 (2 of them foreign); 30 were in its socket at its death and 10 came while it was
  // down. The next one's socket saw 560 arrive (3 foreign), took 540 of the run's, dropped 5 and holds 12.
  ReceiverRestarts restarts{.restarted = true, .taken = 398, .foreign = 2};
  KernelLinkCount count = count_kernel_link(link(1000, 398 + 540, 560, 5, 2 + 3), true, restarts);
  ASSERT_TRUE(count.exact) << count.inexact_reason;
  EXPECT_EQ(count.socket_full, 5u);
  EXPECT_EQ(count.in_socket, 12u);           // arrived 557 of the run's = taken 540 + dropped 5 + queued 12
  EXPECT_EQ(count.lost_with_receiver, 45u);  // sent 1000 = 398 taken before + 557 arrived after + 45
  EXPECT_EQ(count.lost_before_socket, 0u);
  EXPECT_EQ(count.dropped() + count.in_socket + 398 + 540, 1000u);
  // Its senders' frames it saw arrive count as reached: none uncounted here, 7 where the sender counted 7 fewer.
  EXPECT_EQ(sends_not_counted(link(1000, 938, 560, 5, 5), restarts), 0u);
  EXPECT_EQ(sends_not_counted(link(948, 938, 560, 5, 5), restarts), 7u);
}

TEST(KernelLinkCount, CountsThatContradictEachOtherAreInexact) {
  EXPECT_FALSE(count_kernel_link(link(100, 100, 120, 0), true).exact);  // more arrived than was sent
  EXPECT_FALSE(count_kernel_link(link(100, 90, 95, 10), true).exact);   // taken + dropped > arrived
  EXPECT_FALSE(count_kernel_link(link(100, 101, 101, 0), true).exact);  // taken > sent
}

}  // namespace
}  // namespace tandem
