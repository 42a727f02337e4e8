// Tests of a wire port's two halves on real mbufs: frames come off the wire as they went on, numbered in order; a
// refused frame leaves no gap; the kernel's own frames are told apart; lost frames are found.
#include "wire_link.h"

#include <cstring>
#include <vector>

#include "dataplane/packets/packet_test_support.h"
#include "link_trailer.h"

namespace tandem {
namespace {

std::vector<uint8_t> bytes_of(rte_mbuf* m) {
  return {rte_pktmbuf_mtod(m, uint8_t*), rte_pktmbuf_mtod(m, uint8_t*) + rte_pktmbuf_data_len(m)};
}

TEST(LinkTrailer, IsInNetworkOrderAndComesOffLeavingTheFrameAsItWas) {
  rte_mbuf* m = testing::make_frame(5, 128);
  std::vector<uint8_t> frame = bytes_of(m);
  ASSERT_TRUE(append_link_trailer(m, {0x0102030405060708ull, 42}));
  ASSERT_EQ(rte_pktmbuf_data_len(m), frame.size() + kLinkTrailerBytes);
  const uint8_t* trailer = rte_pktmbuf_mtod(m, uint8_t*) + frame.size();
  EXPECT_EQ(trailer[0], 0x01);  // the most significant byte first, whatever this host's order
  EXPECT_EQ(trailer[7], 0x08);
  EXPECT_EQ(trailer[kLinkTrailerBytes - 2], 0x7d);
  EXPECT_EQ(trailer[kLinkTrailerBytes - 1], 0x57);
  std::optional<LinkTrailer> taken = take_link_trailer(m);
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->seq, 0x0102030405060708ull);
  EXPECT_EQ(taken->sent_ns, 42u);
  EXPECT_EQ(bytes_of(m), frame);
  EXPECT_EQ(rte_pktmbuf_pkt_len(m), frame.size());
  rte_pktmbuf_free(m);
}

TEST(LinkTrailer, AFrameWithoutOneOrWithAnotherVersionIsLeftAlone) {
  rte_mbuf* m = testing::make_frame(0, 64);
  uint16_t length = rte_pktmbuf_data_len(m);
  EXPECT_FALSE(take_link_trailer(m));
  ASSERT_TRUE(append_link_trailer(m, {1, 1}));
  rte_pktmbuf_mtod(m, uint8_t*)[rte_pktmbuf_data_len(m) - 4] = kLinkTrailerVersion + 1;
  EXPECT_FALSE(take_link_trailer(m));
  EXPECT_EQ(rte_pktmbuf_data_len(m), length + kLinkTrailerBytes);
  m->data_len = m->pkt_len = kLinkTrailerBytes - 1;
  EXPECT_FALSE(take_link_trailer(m));
  rte_pktmbuf_free(m);
}

TEST(WireLink, WhatOneEndSendsTheOtherCountsAndTheLostAreFound) {
  WireLink sender, receiver;
  rte_mbuf* burst[8];
  uint64_t sent = 0, lost_on_the_wire = 0;
  for (int round = 0; round < 50; round++) {
    for (auto& m : burst) m = testing::make_frame(static_cast<uint32_t>(round), 64);
    uint16_t stamped = sender.stamp(burst, 8, wall_clock_ns());
    ASSERT_EQ(stamped, 8);
    uint16_t went = round % 5 == 4 ? 6 : 8;  // the device refused the last two: freed, their numbers reused
    sender.sent(went);
    sent += went;
    for (uint16_t i = went; i < 8; i++) rte_pktmbuf_free(burst[i]);
    uint16_t arrived = 0;
    for (uint16_t i = 0; i < went; i++) {
      if ((round * 8 + i) % 11 == 0) {  // the wire loses this one
        lost_on_the_wire++;
        rte_pktmbuf_free(burst[i]);
      } else {
        burst[arrived++] = burst[i];
      }
    }
    receiver.take(burst, arrived, wall_clock_ns());
    for (uint16_t i = 0; i < arrived; i++) {
      EXPECT_EQ(rte_pktmbuf_data_len(burst[i]), 60);  // the trailer is off
      rte_pktmbuf_free(burst[i]);
    }
  }
  EXPECT_EQ(sender.frames_sent(), sent);
  const WireSequence& seen = receiver.sequence();
  EXPECT_EQ(seen.lost(), lost_on_the_wire - (seen.expected() < sent ? sent - seen.expected() : 0));
  EXPECT_EQ(seen.received() + seen.lost() + (sent - seen.expected()), sent);  // the tail: lost after the last seen
  json report = receiver.report();
  EXPECT_EQ(report["foreign"], 0);
  EXPECT_GE(report["delay"]["min_ns"].get<int64_t>(), 0);  // one host, one clock
}

TEST(WireLink, AFrameWithNoRoomForTheTrailerIsRefusedWithoutAGap) {
  WireLink sender, receiver;
  rte_mbuf* burst[3] = {testing::make_frame(0, 64), testing::make_frame(1, 64), testing::make_frame(2, 64)};
  // Fill the middle frame's buffer to its end: no tailroom for the trailer.
  rte_pktmbuf_append(burst[1], rte_pktmbuf_tailroom(burst[1]));
  ASSERT_EQ(sender.stamp(burst, 3, 0), 2);
  sender.sent(2);
  receiver.take(burst, 2, 0);
  EXPECT_EQ(receiver.sequence().lost(), 0u);
  EXPECT_EQ(receiver.sequence().received(), 2u);
  EXPECT_EQ(sender.report()["no_room"], 1);
  rte_pktmbuf_free_bulk(burst, 2);
}

TEST(WireLink, TheKernelsOwnFramesAreForeignAndLeftAsTheyCame) {
  WireLink receiver;
  rte_mbuf* m = testing::make_frame(0, 64);
  std::vector<uint8_t> frame = bytes_of(m);
  receiver.take(&m, 1, 0);
  EXPECT_EQ(bytes_of(m), frame);
  EXPECT_EQ(receiver.report()["foreign"], 1);
  EXPECT_EQ(receiver.sequence().received(), 0u);
  rte_pktmbuf_free(m);
}

}  // namespace
}  // namespace tandem
