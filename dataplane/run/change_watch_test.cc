// Tests of a live change's measured cost: the delivery deficit against the rate before, full-ring drops, and the
// packets the generator gave up while the change stalled the control core.
#include "change_watch.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

constexpr double kHz = 1e6;  // a TSC of 1 MHz: a millisecond is 1000 cycles

// Samples every millisecond from `from_ms` to `to_ms`: `per_ms` packets delivered in each, and `given_up_per_ms`
// given up by the generator in each millisecond of [stall_from_ms, stall_to_ms), where nothing is delivered.
struct Traffic {
  uint64_t delivered = 0, given_up = 0;
  void run(ChangeWatch& watch, int from_ms, int to_ms, uint64_t per_ms, int stall_from_ms = -1, int stall_to_ms = -1,
           uint64_t given_up_per_ms = 0) {
    for (int ms = from_ms; ms < to_ms; ms++) {
      bool stalled = ms >= stall_from_ms && ms < stall_to_ms;
      delivered += stalled ? 0 : per_ms;
      given_up += stalled ? given_up_per_ms : 0;
      watch.sample(static_cast<uint64_t>(ms) * 1000, delivered, 0, given_up, 0);
    }
  }
};

TEST(ChangeWatch, ACostWaitsForItsWindowAndCountsWhatTheGeneratorGaveUp) {
  ChangeWatch watch(kHz);
  Traffic traffic;
  traffic.run(watch, 0, 500, 100);  // 100 packets a millisecond before the change
  watch.watch(7, 500 * 1000, 510 * 1000);
  // The change stalls the control core for 5 ms: nothing delivered, 80 packets a millisecond given up.
  traffic.run(watch, 500, 700, 100, 502, 507, 80);
  EXPECT_TRUE(watch.take_costs(700 * 1000).empty()) << "its window runs 300 ms after the change";
  traffic.run(watch, 700, 820, 100);
  std::vector<json> costs = watch.take_costs(820 * 1000);
  ASSERT_EQ(costs.size(), 1u);
  const json& cost = costs[0];
  EXPECT_EQ(cost["id"], 7);
  EXPECT_NEAR(cost["rate_before_mpps"].get<double>(), 0.1, 1e-9);
  EXPECT_NEAR(cost["deficit_ms"].get<double>(), 5.0, 1e-6) << "five milliseconds without delivery";
  EXPECT_EQ(cost["generator_fell_behind_in_window"], 400u);
  EXPECT_EQ(cost["generator_fell_behind_before"], 0u);
  EXPECT_EQ(cost["ring_drops_in_window"], 0u);
}

TEST(ChangeWatch, WithoutTrafficBeforeTheDeficitIsUnmeasured) {
  ChangeWatch watch(kHz);
  Traffic traffic;
  traffic.run(watch, 0, 300, 0);
  watch.watch(1, 300 * 1000, 300 * 1000);
  traffic.run(watch, 300, 700, 0);
  std::vector<json> costs = watch.take_costs(700 * 1000);
  ASSERT_EQ(costs.size(), 1u);
  EXPECT_TRUE(costs[0]["deficit_ms"].is_null());
}

}  // namespace
}  // namespace tandem
