// Tests of the autoscaler's rule on synthetic series: persisting drops scale out once the window is full, a
// cool-down and a change not yet made hold the next decision, idle instances scale in, the limit holds, a count asked
// for by command is awaited as a decision is, and so is the count after a re-layout.
#include "autoscaler.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

ScaleConfig rule_config() {
  ScaleConfig config;
  config.window_s = 0.1;
  config.cooldown_s = 0.5;
  config.idle_s = 1.0;
  config.idle_below = 0.5;
  return config;
}

// Feeds observations every 10 ms from `from` to `to` (seconds), drops growing by `drops_per_tick`; returns the
// time of the first decision and the decision, or t = -1.
struct Series {
  ScalingRule rule;
  uint64_t dropped = 0;
  double t = 0;
  uint32_t in_use = 1;
  std::pair<double, ScaleDecision> run_until(double to, uint64_t drops_per_tick, double busy) {
    while (t < to - 1e-9) {
      t += 0.01;
      dropped += drops_per_tick;
      ScaleDecision decision = rule.observe({t, dropped, busy, in_use});
      if (decision.change != 0) return {t, decision};
    }
    return {-1, {}};
  }
};

TEST(ScalingRule, DropsPersistingOverTheWindowScaleOutOnce) {
  Series series{ScalingRule(rule_config(), 3)};
  series.run_until(0.05, 0, 0.9);  // no drops yet
  auto [t, decision] = series.run_until(1.0, 100, 0.9);
  EXPECT_EQ(decision.change, +1);
  EXPECT_NEAR(t, 0.05 + 0.1, 1e-6);  // drops from the interval that ended at 0.06: a full window at 0.15
  EXPECT_NE(decision.reason.find("1000 packets dropped"), std::string::npos) << decision.reason;
  EXPECT_EQ(series.rule.wanted(), 2u);
}

TEST(ScalingRule, AGapOfMoreThanAQuarterWindowStartsItAgainAShorterOneDoesNot) {
  Series series{ScalingRule(rule_config(), 3)};
  series.run_until(0.06, 10, 0.9);                             // 60 ms of drops
  EXPECT_EQ(series.run_until(0.09, 0, 0.9).second.change, 0);  // 30 ms without: more than a quarter of 100 ms
  auto [t, decision] = series.run_until(1.0, 10, 0.9);
  EXPECT_NEAR(t, 0.19, 1e-6);
  EXPECT_EQ(decision.change, +1);

  Series slices{ScalingRule(rule_config(), 3)};  // drops in 10 ms bursts 20 ms apart, as from an NF run in slices
  std::pair<double, ScaleDecision> out{-1, {}};
  while (out.first < 0 && slices.t < 1.0) {
    out = slices.run_until(slices.t + 0.01, 10, 0.9);
    if (out.first < 0) out = slices.run_until(slices.t + 0.02, 0, 0.9);
  }
  EXPECT_EQ(out.second.change, +1);
  EXPECT_NEAR(out.first, 0.10, 1e-6);  // from the first burst's interval (0 to 0.01 s), 100 ms on
}

TEST(ScalingRule, NoDecisionUntilTheEgressMadeTheChangeAndTheCoolDownPassed) {
  Series series{ScalingRule(rule_config(), 3)};
  ASSERT_EQ(series.run_until(1.0, 10, 0.9).second.change, +1);
  double asked = series.t;
  // The egress has not moved the flows yet (in_use still 1): drops go on, no second decision.
  EXPECT_EQ(series.run_until(asked + 0.3, 10, 0.9).second.change, 0);
  series.in_use = 2;  // made at asked + 0.3 (observed at the next tick): the cool-down runs from then
  auto [t, decision] = series.run_until(5.0, 10, 0.9);
  EXPECT_EQ(decision.change, +1);
  EXPECT_NEAR(t, asked + 0.31 + 0.5, 1e-6);
  EXPECT_EQ(series.rule.wanted(), 3u);
  series.in_use = 3;
  EXPECT_EQ(series.run_until(t + 5.0, 10, 2.5).second.change, 0);  // at the limit: drops or not, no more
}

TEST(ScalingRule, InstancesWhoseWorkFitsInOneFewerScaleIn) {
  Series series{ScalingRule(rule_config(), 2)};
  ASSERT_EQ(series.run_until(1.0, 10, 0.9).second.change, +1);
  series.in_use = 2;
  // Busy 0.6 of a core in all: it does not fit under 0.5 x 1 instance.
  EXPECT_EQ(series.run_until(series.t + 3.0, 0, 0.6).second.change, 0);
  double quiet_from = series.t;
  auto [t, decision] = series.run_until(series.t + 3.0, 0, 0.3);
  EXPECT_EQ(decision.change, -1);
  EXPECT_NEAR(t, quiet_from + 1.0, 1e-6);
  EXPECT_NE(decision.reason.find("0.30 of a core"), std::string::npos) << decision.reason;
  EXPECT_EQ(series.rule.wanted(), 1u);
}

TEST(ScalingRule, AProposalNotCommittedIsProposedAgainAndChangesNothing) {
  ScalingRule rule(rule_config(), 2);
  ScaleDecision proposal;
  uint64_t dropped = 0;
  for (double t = 0.01; t < 0.2 && proposal.change == 0; t += 0.01) proposal = rule.propose({t, dropped += 50, 0.9, 1});
  ASSERT_EQ(proposal.change, +1);
  EXPECT_EQ(proposal.drops, 500u);  // the window's ten intervals of 50
  EXPECT_EQ(rule.wanted(), 1u);
  EXPECT_FALSE(rule.pending());
  ScaleDecision again = rule.propose({0.11, dropped += 50, 0.9, 1});  // the chain chose another NF: still due
  EXPECT_EQ(again.change, +1);
  rule.commit(again);
  EXPECT_EQ(rule.wanted(), 2u);
  EXPECT_TRUE(rule.pending());
}

TEST(PickDecision, TheScaleOutWithTheMostDropsOverScaleInsAndNothing) {
  ScaleDecision none, in{-1, "idle", 0}, small{+1, "drops", 100}, large{+1, "drops", 900};
  EXPECT_EQ(pick_decision({none, none}), -1);
  EXPECT_EQ(pick_decision({none, in}), 1);
  EXPECT_EQ(pick_decision({in, small, none, large}), 3);
  EXPECT_EQ(pick_decision({large, small}), 0);
  EXPECT_EQ(pick_decision({}), -1);
}

TEST(ScalingRule, ACountAskedForByCommandIsAwaitedAsADecisionIs) {
  Series series{ScalingRule(rule_config(), 3)};
  series.rule.ask(3);  // two at once, as an operator may
  EXPECT_EQ(series.rule.wanted(), 3u);
  EXPECT_TRUE(series.rule.pending());
  series.run_until(0.2, 0, 0.1);  // the egress has not made it: still pending
  EXPECT_TRUE(series.rule.pending());
  series.in_use = 3;
  series.run_until(0.21, 0, 0.1);
  EXPECT_FALSE(series.rule.pending());
  series.rule.ask(3);  // the count it has: nothing to wait for
  EXPECT_FALSE(series.rule.pending());
}

// After a re-layout the new egresses spread over one instance until they read the count: the rule waits for them as
// for a change, and judges idleness afresh from then, not from before the re-layout's hold.
TEST(ScalingRule, AfterARelayoutTheCountIsAwaitedAndIdlenessJudgedAfresh) {
  Series series{ScalingRule(rule_config(), 2)};
  ASSERT_EQ(series.run_until(1.0, 10, 0.9).second.change, +1);
  series.in_use = 2;
  EXPECT_EQ(series.run_until(series.t + 0.9, 0, 0.3).second.change, 0);  // idle for 0.9 s of the 1 s it needs
  series.rule.await_egresses();
  EXPECT_TRUE(series.rule.pending());
  EXPECT_EQ(series.rule.wanted(), 2u);  // the count stays
  series.in_use = 1;                    // the new egresses, not yet spreading
  EXPECT_EQ(series.run_until(series.t + 0.5, 0, 0.3).second.change, 0);
  EXPECT_TRUE(series.rule.pending());
  series.in_use = 2;
  double made_at = series.t + 0.01;
  auto [t, decision] = series.run_until(series.t + 3.0, 0, 0.3);
  EXPECT_EQ(decision.change, -1);
  EXPECT_NEAR(t, made_at + 1.0, 1e-6);  // a full idle window after the egresses made it, none of it before
}

TEST(ScalingRule, ASingleInstanceNeverScalesIn) {
  Series series{ScalingRule(rule_config(), 2)};
  EXPECT_EQ(series.run_until(5.0, 0, 0.0).second.change, 0);
}

}  // namespace
}  // namespace tandem
