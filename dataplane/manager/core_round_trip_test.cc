// Unit tests for the cache-line round trip probe.
#include "core_round_trip.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace tandem {
namespace {

TEST(CoreRoundTrip, TwoCoresGiveAFiniteRoundTrip) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  std::optional<double> ns = cache_line_round_trip_ns(0, 1, 2000, 2000);
  ASSERT_TRUE(ns.has_value());
  // A line cannot cross and come back in under a nanosecond, nor should 2000 rounds take the whole deadline.
  EXPECT_GT(*ns, 1.0);
  EXPECT_LT(*ns, 1e6);
}

TEST(CoreRoundTrip, OneCoreWithItselfHasNoRoundTrip) { EXPECT_FALSE(cache_line_round_trip_ns(1, 1).has_value()); }

TEST(CoreRoundTrip, ACoreThatDoesNotExistGivesNoNumberInsteadOfHanging) {
  EXPECT_FALSE(cache_line_round_trip_ns(0, 4095, 100, 50).has_value());
}

}  // namespace
}  // namespace tandem
