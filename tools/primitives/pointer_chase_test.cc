// Tests of the pointer chase: its cycle visits every slot once before it returns, whatever the seed, and it measures
// latency (a working set beyond the caches is slower than one in L1), not a stream a prefetcher could follow.
#include "pointer_chase.h"

#include <gtest/gtest.h>

#include <cstdio>

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

double median_ns(const Measurement& m) { return m.to_json()["median_ns"].get<double>(); }

// 8 MiB is beyond every L2 (1-4 MiB on current CPUs), so a chase through it waits on L3 or memory and misses the TLB:
// 30-70 cycles or more a load, against 4-5 from 16 KiB, which every L1 holds. 19.6 against 1.1 ns here (18x), and
// 6x or more on any host; 4x fails a chase whose order a prefetcher could follow or whose loads were dropped (both
// come out at 1-2x). Medians of 3, each the mean of a million loads or more.
TEST(PointerChase, ALargeWorkingSetIsSlowerThanASmallOne) {
  Measurement small = pointer_chase_ns(16 << 10, 64, 3);
  Measurement large = pointer_chase_ns(8 << 20, 64, 3);
  ASSERT_TRUE(small.unsupported.empty() && large.unsupported.empty());
  ASSERT_EQ(small.samples_ns.size(), 3u);
  for (double ns : small.samples_ns) EXPECT_GT(ns, 0.0);
  std::printf("pointer chase: 16 KiB %.2f ns a load, 8 MiB %.2f ns\n", median_ns(small), median_ns(large));
  EXPECT_GT(median_ns(large), 4 * median_ns(small));
}

}  // namespace
}  // namespace tandem
