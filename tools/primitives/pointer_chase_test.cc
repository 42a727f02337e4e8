// Tests of the pointer chase's cycle: it visits every slot once before it returns, whatever the seed.
#include "pointer_chase.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

TEST(PointerChase, TheCycleVisitsEverySlotOnce) {
  for (size_t slots : {2u, 3u, 64u, 4096u}) {
    std::vector<size_t> next = random_cycle(slots, slots * 7);
    std::vector<bool> seen(slots, false);
    size_t at = 0;
    for (size_t step = 0; step < slots; step++) {
      EXPECT_FALSE(seen[at]) << "slot " << at << " visited twice in a cycle of " << slots;
      seen[at] = true;
      at = next[at];
    }
    EXPECT_EQ(at, 0u);  // back at the start after exactly `slots` steps
  }
}

TEST(PointerChase, DifferentSeedsGiveDifferentOrders) { EXPECT_NE(random_cycle(1000, 1), random_cycle(1000, 2)); }

TEST(PointerChase, AWorkingSetSmallerThanTwoStridesIsUnsupportedNotZero) {
  Measurement m = pointer_chase_ns(64, 64, 3);
  EXPECT_FALSE(m.unsupported.empty());
  EXPECT_TRUE(m.to_json().contains("unsupported"));
  EXPECT_FALSE(m.to_json().contains("median_ns"));
}

TEST(PointerChase, AChaseTakesTime) {
  Measurement m = pointer_chase_ns(1 << 16, 64, 3);
  ASSERT_TRUE(m.unsupported.empty());
  ASSERT_EQ(m.samples_ns.size(), 3u);
  for (double ns : m.samples_ns) EXPECT_GT(ns, 0.0);
}

}  // namespace
}  // namespace tandem
