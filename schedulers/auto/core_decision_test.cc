// Tests of auto's choice per core on synthetic two-core runs: when each core gets its own policy, and when not.
#include "core_decision.h"

#include <gtest/gtest.h>

#include "predictions_test_support.h"

namespace tandem::autosched {
namespace {

constexpr double kHz = 2e9;
constexpr double kMargin = 0.1;  // auto's default

// Chain 0 on core 1: a native NF, then an unmodified application (testpmd). Chain 1 on core 2: `natives` native
// NFs, in a line (each fed by the one before: consecutive calls in one worker), or a graph whose NFs each take their
// input from a ring (a fan-out and a join). Both offered `pps`.
enum class Shape { Line, Graph };
Workload external_beside_natives(int natives, double pps, Shape shape = Shape::Line) {
  Workload w;
  w.hz = kHz;
  w.nfs.push_back({.chain = 0, .core = 1, .cost_cycles = 300});
  w.nfs.push_back({.chain = 0, .core = 1, .cost_cycles = 300, .external = true, .follows = 0});
  for (int i = 0; i < natives; i++)
    w.nfs.push_back(
        {.chain = 1, .core = 2, .cost_cycles = 300, .follows = i == 0 || shape == Shape::Graph ? -1 : 2 + i - 1});
  w.chains = {{.offered_pps = pps}, {.offered_pps = pps}};
  return w;
}

TEST(CoreDecision, ACorePartKeepsItsNfsWithTheirChainsAndFeedersRenumbered) {
  Workload w = external_beside_natives(3, 1e5);
  w.nfs[3].chain = 0;  // a chain across both cores: its part on core 2 is the part's chain 0 too
  Workload part = core_part(w, 2);
  ASSERT_EQ(part.nfs.size(), 3u);
  ASSERT_EQ(part.chains.size(), 2u);  // chain 1 (its first NF), then chain 0
  EXPECT_EQ(part.nfs[0].chain, 0);
  EXPECT_EQ(part.nfs[1].chain, 1);
  EXPECT_EQ(part.nfs[0].follows, -1);
  EXPECT_EQ(part.nfs[1].follows, 0);  // its feeder on this core, renumbered
  EXPECT_EQ(part.nfs[2].follows, 1);
  EXPECT_EQ(part.hz, kHz);
  Workload first = core_part(w, 1);
  EXPECT_EQ(first.nfs[1].follows, 0);
  EXPECT_TRUE(first.nfs[1].external);
}

TEST(CoreDecision, OnePolicyOnEveryCorePredictsWhatThatPolicyDoes) {
  Workload w = external_beside_natives(4, 2e5);
  for (std::string policy : {"unis", "hybrid", "cfs"}) {
    Prediction whole = predict(policy, w, {});
    Prediction mixed = predict(CorePolicies{{1, policy}, {2, policy}}, w, {});
    EXPECT_EQ(mixed.policy, "per_core");
    EXPECT_DOUBLE_EQ(mixed.throughput_pps, whole.throughput_pps) << policy;
    EXPECT_DOUBLE_EQ(mixed.latency_us, whole.latency_us) << policy;
    EXPECT_DOUBLE_EQ(mixed.jain, whole.jain) << policy;
    EXPECT_NEAR(mixed.cpu_share, whole.cpu_share, 1e-12) << policy;
  }
}

TEST(CoreDecision, AnExternalNfOnOneCoreLeavesTheOtherCoreToRunToCompletion) {
  // The external NF rules rtc out for the whole run. Alone, core 2's graph of five native NFs waits for no switch
  // under rtc, where every policy that schedules processes makes each of its hops wait for a hand-over (hybrid's
  // worker too: its NFs are not one run of calls): for latency, the mix wins.
  Workload w = external_beside_natives(5, 1e5, Shape::Graph);
  Decision d = decide_per_core(w, Objective::Latency, std::nullopt, {}, {}, kMargin);
  ASSERT_EQ(d.policy, "per_core") << d.reason;
  EXPECT_EQ(d.core_policies.at(2), "rtc");
  EXPECT_EQ(d.core_policies.at(1), decide(core_part(w, 1), Objective::Latency, std::nullopt, {}).policy);
  const Prediction& mix = of(d, "per_core");
  EXPECT_EQ(mix.core_policies, d.core_policies);
  EXPECT_FALSE(of(d, "rtc").feasible);
  for (const Prediction& p : d.predictions) {
    if (!p.feasible || p.policy == "per_core") continue;
    EXPECT_LT(mix.latency_us * (1 + kMargin), p.latency_us) << p.policy;
  }
  EXPECT_NE(d.reason.find("core 2 rtc"), std::string::npos) << d.reason;
  EXPECT_EQ(to_json(d)["core_policies"]["2"], "rtc");
}

TEST(CoreDecision, AMixThatPerCoreRefusesLeavesOnePolicySayingWhy) {
  Workload w = external_beside_natives(5, 1e5, Shape::Graph);
  CorePolicies asked;
  MixRefusal refusal = [&asked](const CorePolicies& policies) -> std::optional<std::string> {
    asked = policies;
    return "scheduler.cores: refused for the test";
  };
  Decision d = decide_per_core(w, Objective::Latency, std::nullopt, {}, {}, kMargin, refusal);
  Decision taken = decide_per_core(w, Objective::Latency, std::nullopt, {}, {}, kMargin);
  ASSERT_EQ(taken.policy, "per_core") << taken.reason;
  EXPECT_EQ(asked, taken.core_policies);  // the mix it would have taken was the one checked
  EXPECT_EQ(d.policy, decide(w, Objective::Latency, std::nullopt, {}).policy);
  EXPECT_TRUE(d.core_policies.empty());
  EXPECT_NE(d.reason.find("but per_core refused it: scheduler.cores: refused for the test"), std::string::npos)
      << d.reason;
  // A check that accepts it changes nothing.
  Decision accepted = decide_per_core(w, Objective::Latency, std::nullopt, {}, {}, kMargin,
                                      [](const CorePolicies&) { return std::optional<std::string>(); });
  EXPECT_EQ(accepted.core_policies, taken.core_policies);
}

TEST(CoreDecision, EachCoresChoiceMovesWithItsLoad) {
  // For efficiency the native core's two NFs sleep between packets at a trickle, and poll once packets come
  // without pause: what auto, re-deciding at measured rates, would re-lay the NFs out for.
  Workload trickle = external_beside_natives(2, 1e4, Shape::Graph);
  Workload flood = external_beside_natives(2, 5e6, Shape::Graph);
  CorePolicies at_trickle = choices_per_core(trickle, Objective::Efficiency, std::nullopt, {}, {});
  CorePolicies at_flood = choices_per_core(flood, Objective::Efficiency, std::nullopt, {}, {});
  ASSERT_EQ(at_trickle.size(), 2u);
  ASSERT_EQ(at_flood.size(), 2u);
  EXPECT_EQ(at_trickle.at(2), "rtc-sleep");
  EXPECT_EQ(at_flood.at(2), "rtc");
  EXPECT_EQ(at_trickle.at(1), at_flood.at(1));
  EXPECT_EQ(mix_name(at_flood), "per_core (core 1 " + at_flood.at(1) + ", core 2 rtc)");
  // Cores that choose alike, one NF core, a kernel-I/O NF: no mix.
  Workload alike = trickle;
  alike.nfs[1].external = false;
  EXPECT_TRUE(choices_per_core(alike, Objective::Latency, std::nullopt, {}, {}).empty());
  Workload kernel_io = trickle;
  kernel_io.nfs[0].kernel_io = true;
  EXPECT_TRUE(choices_per_core(kernel_io, Objective::Efficiency, std::nullopt, {}, {}).empty());
}

TEST(CoreDecision, ForEfficiencyTheNativeCoreSleepsBesideTheExternalNfsCore) {
  // The external NF's core must be scheduled from outside, by a poller; core 2's line of native NFs, lightly
  // loaded, can sleep between packets under rtc-sleep and leave its core idle: more packets per busy CPU second.
  Workload w = external_beside_natives(3, 1e5);
  Decision d = decide_per_core(w, Objective::Efficiency, std::nullopt, {}, {}, kMargin);
  ASSERT_EQ(d.policy, "per_core") << d.reason;
  EXPECT_EQ(d.core_policies.at(2), "rtc-sleep");
  const Prediction& mix = of(d, "per_core");
  EXPECT_LT(mix.cpu_share, 1.0);
  EXPECT_DOUBLE_EQ(mix.throughput_pps, 2e5);  // both chains served in full
}

TEST(CoreDecision, AMixWithinTheMarginLeavesOnePolicy) {
  // For throughput, hybrid runs core 2's line as calls in one worker too, a switch a ring's worth of packets
  // apart: rtc there is better by less than the margin.
  Workload w = external_beside_natives(3, 0);
  Decision d = decide_per_core(w, Objective::Throughput, std::nullopt, {}, {}, kMargin);
  Decision whole = decide(w, Objective::Throughput, std::nullopt, {});
  EXPECT_EQ(d.policy, whole.policy);
  EXPECT_TRUE(d.core_policies.empty());
  EXPECT_NE(d.reason.find("not better by the margin"), std::string::npos) << d.reason;
  // With no margin the same mix is taken.
  Decision eager = decide_per_core(w, Objective::Throughput, std::nullopt, {}, {}, 0);
  EXPECT_EQ(eager.policy, "per_core") << eager.reason;
}

TEST(CoreDecision, CoresThatChooseAlikeKeepOnePolicy) {
  Workload w = external_beside_natives(3, 1e5);
  w.nfs[1].external = false;  // native NFs on both cores: rtc on each
  Decision d = decide_per_core(w, Objective::Latency, std::nullopt, {}, {}, kMargin);
  EXPECT_EQ(d.policy, decide(w, Objective::Latency, std::nullopt, {}).policy);
  EXPECT_TRUE(d.core_policies.empty());
  EXPECT_FALSE(to_json(d).contains("core_policies"));
}

TEST(CoreDecision, KernelIoNfsAndOneCoreAreTheWholeRunsDecision) {
  Workload w = external_beside_natives(5, 1e5);
  w.nfs[0].kernel_io = true;
  EXPECT_EQ(decide_per_core(w, Objective::Latency, std::nullopt, {}, {}, kMargin).policy, "scc");
  Workload one = external_beside_natives(5, 1e5);
  for (ModelNf& nf : one.nfs) nf.core = 1;
  EXPECT_EQ(decide_per_core(one, Objective::Latency, std::nullopt, {}, {}, kMargin).policy,
            decide(one, Objective::Latency, std::nullopt, {}).policy);
}

TEST(CoreDecision, AMixThatAloneMeetsTheSloIsTakenWhateverItsMerit) {
  // Both chains are served in full whatever runs them: for throughput no mix is better than one policy, but only
  // the mix waits little enough for an SLO between the two.
  Workload w = external_beside_natives(5, 1e5, Shape::Graph);
  Decision plain = decide_per_core(w, Objective::Throughput, std::nullopt, {}, {}, kMargin);
  ASSERT_NE(plain.policy, "per_core") << plain.reason;
  Decision latency = decide_per_core(w, Objective::Latency, std::nullopt, {}, {}, kMargin);
  const double mix_us = of(latency, "per_core").latency_us;
  double best_single_us = 1e18;
  for (const Prediction& p : latency.predictions)
    if (p.feasible && p.policy != "per_core") best_single_us = std::min(best_single_us, p.latency_us);
  ASSERT_LT(mix_us, best_single_us);
  Decision d = decide_per_core(w, Objective::Throughput, (mix_us + best_single_us) / 2, {}, {}, kMargin);
  EXPECT_EQ(d.policy, "per_core") << d.reason;
  EXPECT_EQ(d.core_policies, latency.core_policies);
}

}  // namespace
}  // namespace tandem::autosched
