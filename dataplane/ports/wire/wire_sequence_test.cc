// Tests of the wire's loss count from sequence numbers: gaps are losses, a late frame fills its gap, a duplicate
// counts once, and a number from nowhere changes nothing.
#include "wire_sequence.h"

#include <gtest/gtest.h>

#include <initializer_list>

namespace tandem {
namespace {

struct Counts {
  uint64_t received, lost, late = 0, duplicates = 0;
};

// The counts `sequence` shows after seeing `numbers`, and the balance every count keeps: what the sender sent up to
// the last number seen was received or lost.
void expect_counts(std::initializer_list<uint64_t> numbers, Counts expected) {
  WireSequence sequence;
  for (uint64_t seq : numbers) sequence.saw(seq);
  EXPECT_EQ(sequence.received(), expected.received);
  EXPECT_EQ(sequence.lost(), expected.lost);
  EXPECT_EQ(sequence.late(), expected.late);
  EXPECT_EQ(sequence.duplicates(), expected.duplicates);
  EXPECT_EQ(sequence.received() + sequence.lost(), sequence.expected());
}

TEST(WireSequence, InOrderFramesLoseNothing) {
  WireSequence sequence;
  for (uint64_t seq = 0; seq < 5000; seq++) ASSERT_TRUE(sequence.saw(seq));
  EXPECT_EQ(sequence.received(), 5000u);
  EXPECT_EQ(sequence.lost(), 0u);
  EXPECT_EQ(sequence.expected(), 5000u);
}

TEST(WireSequence, GapsAreLostAndSentEqualsReceivedPlusLost) {
  WireSequence sequence;
  uint64_t dropped = 0;
  for (uint64_t seq = 0; seq < 10001; seq++) {          // 10000, the last, arrives: no tail
    if (seq % 7 == 3 || (seq >= 4000 && seq < 6500)) {  // scattered losses and one long outage (over the window)
      dropped++;
      continue;
    }
    sequence.saw(seq);
  }
  EXPECT_EQ(sequence.lost(), dropped);
  EXPECT_EQ(sequence.received() + sequence.lost(), sequence.expected());
  EXPECT_EQ(sequence.expected(), 10001u);
}

TEST(WireSequence, ALossFromTheStartIsCounted) { expect_counts({3}, {.received = 1, .lost = 3}); }

TEST(WireSequence, ALateFrameFillsItsGapAndADuplicateCountsOnce) {
  expect_counts({0, 1, 3, 4, 2, 2, 4}, {.received = 5, .lost = 0, .late = 1, .duplicates = 2});
}

TEST(WireSequence, AFrameLateByMoreThanTheWindowStillFillsAGap) {
  WireSequence sequence;
  sequence.saw(0);
  sequence.saw(2);  // 1 lost...
  for (uint64_t seq = 3; seq < 3 + 2 * WireSequence::kWindow; seq++) sequence.saw(seq);
  ASSERT_EQ(sequence.lost(), 1u);
  sequence.saw(1);  // ... until it comes, two windows late
  EXPECT_EQ(sequence.lost(), 0u);
  EXPECT_EQ(sequence.late(), 1u);
  EXPECT_EQ(sequence.received() + sequence.lost(), sequence.expected());
}

TEST(WireSequence, ANumberFarAheadIsRefusedAndTheCountGoesOn) {
  WireSequence sequence;
  sequence.saw(0);
  EXPECT_FALSE(sequence.saw(UINT64_MAX));  // forged: would make every later frame "late"
  EXPECT_FALSE(sequence.saw(WireSequence::kMostAhead + 2));
  EXPECT_TRUE(sequence.saw(1));
  EXPECT_EQ(sequence.implausible(), 2u);
  EXPECT_EQ(sequence.lost(), 0u);
  EXPECT_EQ(sequence.received(), 2u);
  EXPECT_EQ(sequence.expected(), 2u);
}

}  // namespace
}  // namespace tandem
