// Tests of the control loop's naps for idle work: within what the module may go without a tick, a third of the core.
#include "idle_work_naps.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

constexpr double kHz = 1e9;  // a TSC of 1 GHz: a cycle is a nanosecond
constexpr uint64_t kNoBound = Scheduler::kNoAbsenceBound;

TEST(IdleWorkNaps, AModuleThatBoundsItsAbsenceIsTickedWhenTheNapEnds) {
  IdleWorkNaps naps(kHz);
  // NFVnice congested, its watermarks checked every 10 us: right after a tick, the nap ends as the next falls due.
  EXPECT_EQ(naps.nap_ns(1'000'000, 1'010'000, 10'000), 10'000u);
  EXPECT_EQ(naps.nap_ns(1'000'000, 1'050'000, 20'000), 20'000u) << "no longer than the module may be absent";
  EXPECT_EQ(naps.nap_ns(1'000'000, 1'000'001, 10'000), IdleWorkNaps::kShortestNs) << "a tick due at once";
  EXPECT_EQ(naps.nap_ns(1'000'000, 900'000, 10'000), IdleWorkNaps::kShortestNs) << "a tick overdue";
  EXPECT_EQ(naps.nap_ns(1'000'000, 101'000'000, 1'000'000'000), IdleWorkNaps::kLongestNs);
}

TEST(IdleWorkNaps, AModuleThatBoundsNothingGetsTheLongestNaps) {
  IdleWorkNaps naps(kHz);
  EXPECT_EQ(naps.nap_ns(1'000'000, 1'010'000, kNoBound), IdleWorkNaps::kLongestNs) << "NFVnice, not congested";
  EXPECT_EQ(naps.nap_ns(1'000'000, 1'000'001, kNoBound), IdleWorkNaps::kLongestNs) << "unis, ticked every turn";
  EXPECT_EQ(naps.nap_ns(1'000'000, std::nullopt, 10'000), IdleWorkNaps::kLongestNs) << "detached: no tick";
}

TEST(IdleWorkNaps, LeavesTheIdleWorkAThirdOfTheCore) {
  IdleWorkNaps naps(2 * kHz);  // 2 cycles a nanosecond
  EXPECT_EQ(naps.next_nap_tsc(1'000'000, 10'000), 1'000'000u + 3 * 20'000u);
  EXPECT_EQ(naps.next_nap_tsc(0, IdleWorkNaps::kLongestNs), 3 * 2 * IdleWorkNaps::kLongestNs);
}

}  // namespace
}  // namespace tandem
