// Tests of Bubble's scale decisions: who is overloaded, which NF moves where, and when nothing can move.
#include "migration.h"

#include <gtest/gtest.h>

namespace tandem::bubble {
namespace {

TEST(DecideScaling, NothingHappensBelowMu) {
  EXPECT_TRUE(decide_scaling({{0, 0.5, {{1, 0.3}, {2, 0.2}}}, {1, 0.1, {{3, 0.1}}}}, 0.9).empty());
}

TEST(DecideScaling, TheTailNfThatFitsMovesToTheLeastUtilised) {
  auto decisions = decide_scaling({{0, 0.95, {{1, 0.5}, {2, 0.3}, {3, 0.15}}}, {1, 0.6, {}}, {2, 0.2, {}}}, 0.9);
  ASSERT_EQ(decisions.size(), 1u);
  ASSERT_TRUE(decisions[0].migration.has_value());
  EXPECT_EQ(decisions[0].migration->nf, 3);
  EXPECT_EQ(decisions[0].migration->from, 0);
  EXPECT_EQ(decisions[0].migration->to, 2);
}

TEST(DecideScaling, SkipsTailNfsThatWouldOverloadTheDestination) {
  auto decisions = decide_scaling({{0, 0.95, {{1, 0.25}, {2, 0.7}}}, {1, 0.5, {}}}, 0.9);
  ASSERT_TRUE(decisions[0].migration.has_value());
  EXPECT_EQ(decisions[0].migration->nf, 1);  // 0.5 + 0.7 > 0.9; 0.5 + 0.25 fits
}

TEST(DecideScaling, ReportsWhyNothingMoved) {
  auto alone = decide_scaling({{0, 0.97, {{1, 0.97}}}, {1, 0.0, {}}}, 0.9);
  EXPECT_FALSE(alone[0].migration.has_value());
  EXPECT_EQ(alone[0].reason, "it runs a single NF");
  auto no_room = decide_scaling({{0, 0.97, {{1, 0.5}, {2, 0.47}}}}, 0.9);
  EXPECT_EQ(no_room[0].reason, "no under-utilised scheduler to take an NF");
  auto too_big = decide_scaling({{0, 0.97, {{1, 0.5}, {2, 0.47}}}, {1, 0.6, {}}}, 0.9);
  EXPECT_EQ(too_big[0].reason, "no NF's load fits under mu on the least-utilised scheduler");
}

TEST(DecideScaling, ADestinationFilledByOneMoveIsNotFilledTwice) {
  auto decisions =
      decide_scaling({{0, 0.96, {{1, 0.5}, {2, 0.46}}}, {1, 0.96, {{3, 0.5}, {4, 0.46}}}, {2, 0.0, {}}}, 0.9);
  ASSERT_EQ(decisions.size(), 2u);
  ASSERT_TRUE(decisions[0].migration.has_value());
  EXPECT_EQ(decisions[0].migration->to, 2);
  EXPECT_FALSE(decisions[1].migration.has_value());  // worker 2 now holds 0.46: another 0.46 would pass mu
}

}  // namespace
}  // namespace tandem::bubble
