// Tests of UNiS's Algorithm 1: selection rule (the paper's Fig. 3 b-c) and slice arithmetic.
#include "wait_queue.h"

#include <gtest/gtest.h>

#include <limits>
#include <tuple>

namespace tandem::unis {
namespace {

// Rings 0..5; NFs 10 (A), 12 (C), 13 (D) of chain A->B->C->D share this core, as in the paper's example.
constexpr uint32_t kThetaMin = 24, kThetaMax = 1536;
ScheduledNf nf(int index, int ingress, int egress, uint64_t slice = 1000) {
  return {.nf = index,
          .worker = index,
          .ingress = ingress,
          .egress = egress,
          .slice_cycles = slice,
          .theta_min = kThetaMin,
          .theta_max = kThetaMax};
}
CoreQueue paper_example(bool occupancy = true) {
  return CoreQueue({nf(10, 0, 1), nf(12, 2, 3), nf(13, 3, 4)}, occupancy);
}
std::vector<uint32_t> rings(std::vector<uint32_t> occupancy) { return occupancy; }

TEST(Algorithm1, KeepsTheRunningNfWhileItsSliceLastsAndItHasWorkAndRoom) {
  CoreQueue q = paper_example();
  EXPECT_EQ(q.start(0).nf, 10);
  EXPECT_EQ(q.waiting(), (std::vector<int>{12, 13}));
  EXPECT_FALSE(q.decide(500, rings({100, 100, 100, 100, 0})).has_value());
  EXPECT_EQ(q.running().nf, 10);
}

TEST(Algorithm1, Fig3bFrontSatisfiesTheCriteria) {
  CoreQueue q = paper_example();
  q.start(0);
  auto change = q.decide(1000, rings({100, 100, 100, 100, 0}));  // A's slice expired; C has work and room
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->from, 10);
  EXPECT_EQ(change->to, 12);
  EXPECT_EQ(q.waiting(), (std::vector<int>{13, 10}));
}

TEST(Algorithm1, Fig3cFrontDoesNotSatisfyTheCriteria) {
  CoreQueue q = paper_example();
  q.start(0);
  auto change = q.decide(1000, rings({100, 100, kThetaMin, 100, 0}));  // C's ingress holds only theta_min
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->to, 13);
  EXPECT_EQ(q.waiting(), (std::vector<int>{10, 12}));
}

TEST(Algorithm1, AtLowLoadAnIdleNfGivesTheCoreToOneWithAnyPacket) {
  CoreQueue q = paper_example();
  q.start(0);
  // A has nothing; C and D hold fewer than theta_min (a lone ping, a TCP handshake): D, with one, gets the core.
  auto change = q.decide(10, rings({0, 0, 0, 1, 0}));
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->from, 10);
  EXPECT_EQ(change->to, 13);
  EXPECT_EQ(change->why, YieldReason::kInputStarved);
  EXPECT_EQ(q.waiting(), (std::vector<int>{12, 10}));
  // An NF that still has packets below theta_min keeps the core while its slice lasts, as the paper has it.
  CoreQueue busy = paper_example();
  busy.start(0);
  EXPECT_FALSE(busy.decide(10, rings({5, 0, 3, 1, 0})).has_value());
  // And nobody with a packet: nothing to switch to.
  CoreQueue idle = paper_example();
  idle.start(0);
  EXPECT_FALSE(idle.decide(10, rings({0, 0, 0, 0, 0})).has_value());
}

TEST(Algorithm1, TheIdleHandoverWaitsUntilTheInputHasStayedEmptyForItsTime) {
  CoreQueue q({nf(10, 0, 1), nf(12, 2, 3), nf(13, 3, 4)}, true, SliceStart::kDecision, 100);
  q.start(0);
  EXPECT_FALSE(q.decide(10, rings({0, 0, 0, 1, 0})).has_value());  // A's input first seen empty at 10
  EXPECT_FALSE(q.decide(50, rings({2, 0, 0, 1, 0})).has_value());  // it refilled: under load, A keeps the core
  EXPECT_FALSE(q.decide(60, rings({0, 0, 0, 1, 0})).has_value());  // empty again from 60
  EXPECT_FALSE(q.decide(159, rings({0, 0, 0, 1, 0})).has_value());
  auto change = q.decide(160, rings({0, 0, 0, 1, 0}));  // 100 cycles empty: D, with its one packet, runs
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->to, 13);
  CoreQueue paper({nf(10, 0, 1), nf(12, 2, 3), nf(13, 3, 4)}, true, SliceStart::kDecision, CoreQueue::kNever);
  paper.start(0);
  EXPECT_FALSE(paper.decide(1'000'000, rings({0, 0, 0, 1, 0})).has_value());  // the paper's rule: never
}

TEST(Algorithm1, AnNfOnAnErrandGetsATurnWithoutInputAndKeepsItUntilTheErrandIsDone) {
  // D (13) has a live change to take and no packet; C (12) has nothing either. A's slice ends.
  bool errand = true;
  Errand d_on_errand = [&](const ScheduledNf& candidate) { return errand && candidate.nf == 13; };
  const std::vector<uint32_t> empty_but_a = rings({100, 0, 0, 0, 0});
  CoreQueue without = paper_example();
  without.start(0);
  EXPECT_FALSE(without.decide(1000, empty_but_a).has_value());  // by occupancy alone nobody else is worth it
  CoreQueue with = paper_example();
  with.start(0);
  auto change = with.decide(1000, empty_but_a, {}, d_on_errand);
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->to, 13);
  // Its input is empty, which would end a turn at once: on the errand it keeps the core (its slice still bounds it).
  EXPECT_FALSE(with.must_yield(1010, empty_but_a, d_on_errand));
  EXPECT_TRUE(with.must_yield(1010 + 1000, empty_but_a, d_on_errand));  // the slice expired
  // Done with its errand, its empty input ends the turn.
  errand = false;
  EXPECT_TRUE(with.must_yield(1020, empty_but_a, d_on_errand));
  auto back = with.decide(1020, empty_but_a, {}, d_on_errand);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->to, 10);
  EXPECT_EQ(back->why, YieldReason::kInputStarved);
}

TEST(Algorithm1, UnderLoadPacketsBelowThetaMinThatWaitedTheResidueTimeGetTheirNfATurn) {
  // A's input stays full (the core never idles); C holds 3 packets, its chain's last (its entry closed); D none.
  auto queue = [](uint64_t residue_wait) {
    return CoreQueue({nf(10, 0, 1), nf(12, 2, 3), nf(13, 4, 5)}, true, SliceStart::kDecision, CoreQueue::kNever,
                     residue_wait);
  };
  CoreQueue q = queue(5000);
  q.start(0);
  EXPECT_FALSE(q.decide(1000, rings({500, 0, 3, 0, 0, 0})).has_value());  // C's packets first seen at 1000
  EXPECT_FALSE(q.decide(5999, rings({500, 0, 3, 0, 0, 0})).has_value());
  auto change = q.decide(6000, rings({500, 0, 3, 0, 0, 0}));  // they waited 5000 cycles: C runs
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->to, 12);
  // A waiting NF whose input emptied starts its wait again; the paper's rule never gives C the core.
  CoreQueue emptied = queue(5000);
  emptied.start(0);
  EXPECT_FALSE(emptied.decide(1000, rings({500, 0, 3, 0, 0, 0})).has_value());
  EXPECT_FALSE(emptied.decide(3000, rings({500, 0, 0, 0, 0, 0})).has_value());
  EXPECT_FALSE(emptied.decide(6000, rings({500, 0, 3, 0, 0, 0})).has_value());  // seen again at 6000 only
  CoreQueue paper = queue(CoreQueue::kNever);
  paper.start(0);
  EXPECT_FALSE(paper.decide(1000, rings({500, 0, 3, 0, 0, 0})).has_value());
  EXPECT_FALSE(paper.decide(1'000'000, rings({500, 0, 3, 0, 0, 0})).has_value());
}

TEST(Algorithm1, OnlyTheCandidatesLookedAtAreReadAndInQueueOrder) {
  CoreQueue q = paper_example();
  q.start(0);
  std::vector<uint32_t> occupancy = {100, 100, 0, 0, 0};  // stale: C looks starved, D too
  std::vector<int> judged;
  auto change = q.decide(1000, occupancy, [&](const ScheduledNf& candidate) {
    judged.push_back(candidate.nf);
    if (candidate.nf == 12) occupancy[2] = 100;  // read now: C has work after all
  });
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->to, 12);
  EXPECT_EQ(judged, (std::vector<int>{12}));  // D was never looked at, so never read
}

TEST(Algorithm1, CandidateWithAFullEgressIsSkipped) {
  CoreQueue q = paper_example();
  q.start(0);
  auto change = q.decide(1000, rings({100, 100, 100, kThetaMax, 0}));  // C's egress (ring 3) is at theta_max
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->to, 13);
}

TEST(Algorithm1, PreemptsBeforeTheSliceEndsWhenInputRunsOutOrOutputFills) {
  CoreQueue empty_input = paper_example();
  empty_input.start(0);
  auto change = empty_input.decide(10, rings({kThetaMin, 0, 100, 0, 0}));
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->to, 12);

  CoreQueue full_output = paper_example();
  full_output.start(0);
  change = full_output.decide(10, rings({500, kThetaMax, 100, 0, 0}));
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->to, 12);
}

TEST(Algorithm1, NobodyWorthRunningKeepsTheCoreAndTheQueueOrder) {
  CoreQueue q = paper_example();
  q.start(0);
  EXPECT_FALSE(q.decide(1000, rings({0, 0, 0, 0, 0})).has_value());
  EXPECT_EQ(q.running().nf, 10);
  EXPECT_EQ(q.waiting(), (std::vector<int>{12, 13}));
  // Still expired: as soon as C gets packets it takes over.
  auto change = q.decide(1001, rings({0, 0, 100, 0, 0}));
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->to, 12);
}

TEST(Algorithm1, WithoutTheOccupancyRulesOnlyTheSliceCounts) {
  CoreQueue q = paper_example(false);
  q.start(0);
  EXPECT_FALSE(q.decide(10, rings({0, 2048, 0, 0, 0})).has_value());  // no input, full output: still its slice
  auto change = q.decide(1000, rings({0, 0, 0, 0, 0}));               // slice over: next in line, work or not
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->to, 12);
  EXPECT_EQ(q.waiting(), (std::vector<int>{13, 10}));
}

TEST(Algorithm1, TheNewNfGetsItsOwnSlice) {
  CoreQueue q({nf(1, 0, 1, 100), nf(2, 1, 2, 5000)}, true);
  q.start(0);
  ASSERT_TRUE(q.decide(100, rings({100, 100, 0})).has_value());
  EXPECT_FALSE(q.decide(5099, rings({100, 100, 0})).has_value());
  EXPECT_TRUE(q.decide(5100, rings({100, 100, 0})).has_value());
}

// Two NFs chained on rings 0 -> 1 -> 2, both of `cost` cycles a packet, started at TSC 0.
CoreQueue started_pair(double cost, uint64_t slice) {
  ScheduledNf a = nf(1, 0, 1, slice), b = nf(2, 1, 2, slice);
  a.cost_cycles = b.cost_cycles = cost;
  CoreQueue q({a, b}, true);
  q.start(0);
  return q;
}

// Predicted sampling: the running NF (cost 10 cycles/packet, slice 100000) cannot reach a threshold sooner than
// its margin in packets x its cost; the check comes at half that (kPredictionSafety), within [T, slice end].
TEST(PredictedSampling, NextCheckIsHalfTheTimeToTheNearestThreshold) {
  CoreQueue q = started_pair(10, 100000);
  const uint64_t interval = 100;
  // Ingress 1024: 1000 packets above theta_min; egress 0: 1536 below theta_max. The ingress is nearer.
  EXPECT_EQ(q.next_check_tsc(0, rings({1024, 0, 0}), interval), 5000u);
  // Egress 1436: 100 packets below theta_max: 100 x 10 x 0.5.
  EXPECT_EQ(q.next_check_tsc(0, rings({1024, 1436, 0}), interval), 500u);
  // A few packets from a threshold: no sooner than T.
  EXPECT_EQ(q.next_check_tsc(1000, rings({kThetaMin + 1, 0, 0}), interval), 1100u);
  // Far from both thresholds: no later than the slice's end.
  CoreQueue slow = started_pair(1000, 100000);
  EXPECT_EQ(slow.next_check_tsc(0, rings({2048, 0, 0}), interval), 100000u);
}

TEST(PredictedSampling, AnNfSeenFasterThanItsEstimateIsReadSooner) {
  CoreQueue q = started_pair(100, 1000000);
  const uint64_t interval = 10;
  EXPECT_EQ(q.next_check_tsc(0, rings({1024, 0, 0}), interval), 50000u);  // 1000 packets x 100 x 0.5
  // 500 cycles later it had drained 50 packets: 10 cycles each, not 100. 950 left above theta_min.
  EXPECT_EQ(q.next_check_tsc(500, rings({974, 0, 0}), interval), 500u + 4750u);
  // A slower spell never raises the pace above the estimate.
  EXPECT_EQ(q.next_check_tsc(100500, rings({964, 0, 0}), interval), 100500u + 47000u);
  // A new turn forgets the old NF's pace.
  ASSERT_TRUE(q.decide(2000000, rings({964, 100, 0})).has_value());
  EXPECT_EQ(q.next_check_tsc(2000000, rings({964, 100, 0}), interval), 2000000u + 3800u);  // b: 76 x 100 x 0.5
}

TEST(PredictedSampling, WithoutOccupancyRulesOnlyTheSliceAndAloneNever) {
  ScheduledNf a = nf(1, 0, 1, 100000), b = nf(2, 1, 2, 100000);
  a.cost_cycles = 10;
  CoreQueue ablation({a, b}, false);
  ablation.start(0);
  EXPECT_EQ(ablation.next_check_tsc(0, rings({kThetaMin, 0, 0}), 100), 100000u);
  CoreQueue alone({a}, true);
  alone.start(0);
  EXPECT_EQ(alone.next_check_tsc(0, rings({kThetaMin, 0, 0}), 100), std::numeric_limits<uint64_t>::max());
}

TEST(PredictedSampling, MustYieldIsTheConditionDecideActsOn) {
  CoreQueue q = paper_example();
  q.start(0);
  EXPECT_FALSE(q.must_yield(500, rings({100, 100, 100, 100, 0})));
  EXPECT_TRUE(q.must_yield(500, rings({kThetaMin, 100, 100, 100, 0})));  // input ran out
  EXPECT_TRUE(q.must_yield(500, rings({100, kThetaMax, 100, 100, 0})));  // output filled
  EXPECT_TRUE(q.must_yield(1000, rings({100, 100, 100, 100, 0})));       // slice over
}

// a (rings 0 -> 1) hands over to b (1 -> 2) at TSC 1000; slices of 1000 cycles, 10 cycles a packet.
CoreQueue handed_over_pair(SliceStart slice_start) {
  ScheduledNf a = nf(1, 0, 1, 1000), b = nf(2, 1, 2, 1000);
  a.cost_cycles = b.cost_cycles = 10;
  CoreQueue q({a, b}, true, slice_start);
  q.start(0);
  EXPECT_TRUE(q.decide(1000, rings({100, 100, 0})).has_value());  // a's slice is over; b has work and room
  return q;
}

TEST(SliceStart, FromFirstProgressTheSliceStartsWhenTheNfIsSeenWorking) {
  CoreQueue q = handed_over_pair(SliceStart::kFirstProgress);
  q.observe_turn(1500, rings({100, 100, 0}));  // the switch has not reached b's core yet
  // At 1800 b has moved 20 packets: it began 20 x 10 cycles before, at 1600; its slice ends at 2600.
  q.observe_turn(1800, rings({100, 80, 20}));
  EXPECT_FALSE(q.must_yield(2000, rings({100, 60, 40})));
  EXPECT_FALSE(q.must_yield(2599, rings({100, 60, 40})));
  EXPECT_TRUE(q.must_yield(2600, rings({100, 60, 40})));
  // Later readings do not move it again.
  q.observe_turn(2500, rings({100, 50, 50}));
  EXPECT_TRUE(q.must_yield(2600, rings({100, 50, 50})));
}

TEST(SliceStart, NeverBeforeTheDecisionAndNotAtAllInThePapersWay) {
  CoreQueue late = handed_over_pair(SliceStart::kFirstProgress);
  late.observe_turn(1100, rings({100, 60, 100}));  // 100 packets x 10 cycles would date it to 100: the decision, 1000
  EXPECT_FALSE(late.must_yield(1999, rings({100, 60, 100})));
  EXPECT_TRUE(late.must_yield(2000, rings({100, 60, 100})));
  CoreQueue paper = handed_over_pair(SliceStart::kDecision);
  paper.observe_turn(1800, rings({100, 80, 20}));
  EXPECT_TRUE(paper.must_yield(2000, rings({100, 60, 40})));
}

TEST(YieldReason, TheSwitchSaysWhatEndedTheTurn) {
  for (auto [occupancy, now, why] : {std::tuple{rings({kThetaMin, 100, 100, 100, 0}), 500, YieldReason::kInputStarved},
                                     std::tuple{rings({100, kThetaMax, 100, 100, 0}), 500, YieldReason::kOutputFull},
                                     std::tuple{rings({100, 100, 100, 100, 0}), 1000, YieldReason::kSliceExpired}}) {
    CoreQueue q = paper_example();
    q.start(0);
    std::optional<Switch> change = q.decide(static_cast<uint64_t>(now), occupancy);
    ASSERT_TRUE(change.has_value());
    EXPECT_EQ(change->why, why);
  }
}

TEST(TimeSlice, IsCostTimesFractionTimesEgressCapacity) {
  EXPECT_EQ(time_slice_cycles(60, 0.75, 2048), 92160u);
  EXPECT_EQ(time_slice_cycles(60, 1.25, 2048), 153600u);
  EXPECT_EQ(default_theta_min(32), 24u);
  EXPECT_EQ(default_theta_min(4), 0u);
  EXPECT_EQ(default_theta_max(0.75, 2048), 1536u);
}

TEST(TscTimer, ExpiresAtItsDeadline) {
  TscTimer timer;
  EXPECT_TRUE(timer.expired(0));  // never armed
  timer.reset(100, 50);
  EXPECT_FALSE(timer.expired(149));
  EXPECT_TRUE(timer.expired(150));
}

}  // namespace
}  // namespace tandem::unis
