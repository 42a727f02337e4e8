// Tests of auto's hysteresis: a margin and consecutive confirmations before another policy takes over.
#include "hysteresis.h"

#include <gtest/gtest.h>

namespace tandem::autosched {
namespace {

TEST(Hysteresis, SwitchesAfterTheConfirmations) {
  Hysteresis h(0.1, 3);
  EXPECT_FALSE(h.switch_now("coop", 100, "nfvnice", 120));
  EXPECT_FALSE(h.switch_now("coop", 100, "nfvnice", 120));
  EXPECT_TRUE(h.switch_now("coop", 100, "nfvnice", 120));
}

TEST(Hysteresis, AGainWithinTheMarginNeverSwitches) {
  Hysteresis h(0.1, 1);
  for (int i = 0; i < 10; i++) EXPECT_FALSE(h.switch_now("coop", 100, "nfvnice", 109));
}

TEST(Hysteresis, ALoadThatWavesAroundTheLineDoesNotFlap) {
  Hysteresis h(0.1, 3);
  for (int i = 0; i < 10; i++) {
    EXPECT_FALSE(h.switch_now("coop", 100, "nfvnice", 130));
    EXPECT_FALSE(h.switch_now("coop", 100, "nfvnice", 130));
    EXPECT_FALSE(h.switch_now("coop", 100, "coop", 100)) << "one decision the other way starts the count again";
  }
}

TEST(Hysteresis, ADifferentCandidateStartsItsOwnCount) {
  Hysteresis h(0.1, 2);
  EXPECT_FALSE(h.switch_now("coop", 100, "nfvnice", 130));
  EXPECT_FALSE(h.switch_now("coop", 100, "unis", 130));
  EXPECT_TRUE(h.switch_now("coop", 100, "unis", 130));
}

}  // namespace
}  // namespace tandem::autosched
