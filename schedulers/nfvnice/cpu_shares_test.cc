// Tests of NFVnice's weight arithmetic: rate x cost x priority, normalised per core, clamped to the kernel's range.
#include "cpu_shares.h"

#include <gtest/gtest.h>

namespace tandem::nfvnice {
namespace {

TEST(SharesWorthWriting, OnlyChangesBeyondTheTolerance) {
  EXPECT_FALSE(shares_worth_writing(1000, 1000, 0.1));
  EXPECT_FALSE(shares_worth_writing(1000, 1090, 0.1));  // noise in the smoothed rate: keep what is written
  EXPECT_FALSE(shares_worth_writing(1000, 910, 0.1));
  EXPECT_TRUE(shares_worth_writing(1000, 1200, 0.1));  // a real change of demand
  EXPECT_TRUE(shares_worth_writing(1000, 800, 0.1));
  EXPECT_TRUE(shares_worth_writing(1000, 1001, 0.0));  // tolerance 0: every change is written
  EXPECT_TRUE(shares_worth_writing(0, 2, 0.1));        // nothing written yet
}

TEST(DemandRate, ADownstreamNfIsWeightedByItsChainsOfferNotByWhatThrottlingLetThrough) {
  EXPECT_DOUBLE_EQ(demand_rate(0.40e6, 1.5e6, 0.40e6), 1.5e6);   // throttled to 0.4 of 1.5 Mpps: demands 1.5
  EXPECT_DOUBLE_EQ(demand_rate(0.20e6, 1.5e6, 0.40e6), 0.75e6);  // behind a filter that drops half: half the offer
  EXPECT_DOUBLE_EQ(demand_rate(1.0e6, 1.0e6, 1.0e6), 1.0e6);     // nothing shed: what arrives
  EXPECT_DOUBLE_EQ(demand_rate(0.3e6, 1.5e6, 0.0), 0.3e6);       // nothing admitted yet: as measured
}

// Two chains of two NFs on one core, equal offers (1.5 Mpps each): X = 100 + 1150 cycles, Y = 600 + 600. Weighted by
// the rates that reached the second NFs under CFS's even split (0.70 and 1.35 Mpps), the two bottlenecks get equal
// shares and keep that split; weighted by demand, their shares follow their costs, 1150:600, whatever was measured.
TEST(DemandRate, TwoNfChainsAreSharedByTheirOfferWhateverTheSplitWas) {
  auto shares_at = [](double x_through, double y_through) {
    std::vector<NfDemand> nfs = {{.core = 1, .rate_pps = 1.5e6, .cost_cycles = 100},
                                 {.core = 1, .rate_pps = demand_rate(x_through, 1.5e6, x_through), .cost_cycles = 1150},
                                 {.core = 1, .rate_pps = 1.5e6, .cost_cycles = 600},
                                 {.core = 1, .rate_pps = demand_rate(y_through, 1.5e6, y_through), .cost_cycles = 600}};
    return cpu_shares(nfs);
  };
  std::vector<uint64_t> frozen = shares_at(0.70e6, 1.35e6), even = shares_at(1.0e6, 1.0e6);
  EXPECT_NEAR(static_cast<double>(frozen[1]) / frozen[3], 1150.0 / 600, 0.01);
  EXPECT_EQ(frozen, even);  // the measured split no longer feeds back into the weights
}

TEST(CpuShares, ProportionalToRateTimesCostPerCore) {
  // The paper's heterogeneous case with even load: costs 500/250/50 at equal rates.
  std::vector<NfDemand> nfs = {{.core = 1, .rate_pps = 2e6, .cost_cycles = 500},
                               {.core = 1, .rate_pps = 2e6, .cost_cycles = 250},
                               {.core = 1, .rate_pps = 2e6, .cost_cycles = 50}};
  std::vector<uint64_t> shares = cpu_shares(nfs);
  EXPECT_EQ(shares[0] + shares[1] + shares[2], 3u * kDefaultShares) << "a core's shares sum to 1024 per NF";
  EXPECT_NEAR(static_cast<double>(shares[0]) / shares[1], 2.0, 0.01);
  EXPECT_NEAR(static_cast<double>(shares[1]) / shares[2], 5.0, 0.02);
}

TEST(CpuShares, RateCountsLikeCost) {
  std::vector<NfDemand> nfs = {{.core = 1, .rate_pps = 1e6, .cost_cycles = 250},
                               {.core = 1, .rate_pps = 4e6, .cost_cycles = 250}};
  std::vector<uint64_t> shares = cpu_shares(nfs);
  EXPECT_NEAR(static_cast<double>(shares[1]) / shares[0], 4.0, 0.01);
}

TEST(CpuShares, PriorityWeightScalesTheShare) {
  std::vector<NfDemand> nfs = {{.core = 1, .weight = 3, .rate_pps = 1e6, .cost_cycles = 100},
                               {.core = 1, .weight = 1, .rate_pps = 1e6, .cost_cycles = 100}};
  std::vector<uint64_t> shares = cpu_shares(nfs);
  EXPECT_EQ(shares[0], 1536u);
  EXPECT_EQ(shares[1], 512u);
}

TEST(CpuShares, CoresAreNormalisedSeparately) {
  std::vector<NfDemand> nfs = {{.core = 1, .rate_pps = 1e6, .cost_cycles = 100},
                               {.core = 2, .rate_pps = 9e6, .cost_cycles = 100},
                               {.core = 2, .rate_pps = 1e6, .cost_cycles = 100}};
  std::vector<uint64_t> shares = cpu_shares(nfs);
  EXPECT_EQ(shares[0], kDefaultShares) << "alone on its core, whatever its demand";
  EXPECT_EQ(shares[1], 1843u);
  EXPECT_EQ(shares[2], 205u);
}

TEST(CpuShares, NoDemandKeepsDefaultsAndIdleNfsGetTheMinimum) {
  std::vector<NfDemand> idle = {{.core = 1}, {.core = 1}};
  EXPECT_EQ(cpu_shares(idle), (std::vector<uint64_t>{kDefaultShares, kDefaultShares}));
  std::vector<NfDemand> one_busy = {{.core = 1, .rate_pps = 1e6, .cost_cycles = 100},
                                    {.core = 1, .rate_pps = 0, .cost_cycles = 100}};
  std::vector<uint64_t> shares = cpu_shares(one_busy);
  EXPECT_EQ(shares[1], kMinShares);
  EXPECT_EQ(shares[0], 2 * kDefaultShares);
}

TEST(CpuShares, ClampedToTheKernelsMaximum) {
  std::vector<NfDemand> nfs;
  for (int i = 0; i < 300; i++) nfs.push_back({.core = 1, .rate_pps = i == 0 ? 1e9 : 1.0, .cost_cycles = 100});
  EXPECT_EQ(cpu_shares(nfs)[0], kMaxShares);
}

TEST(CpuShares, UnknownCostIsChargedTheCoresMeanKnownCost) {
  // An NF that has not run yet has no measured cost; it must not be starved for it.
  std::vector<NfDemand> nfs = {{.core = 1, .rate_pps = 1e6, .cost_cycles = 100},
                               {.core = 1, .rate_pps = 1e6, .cost_cycles = 300},
                               {.core = 1, .rate_pps = 1e6, .cost_cycles = 0}};
  std::vector<uint64_t> shares = cpu_shares(nfs);
  EXPECT_EQ(shares[2], 1024u);
  EXPECT_EQ(shares[0], 512u);
}

// cgroup v2's cpu.weight keeps the CFS weight the shares give on v1 (the kernel weighs a v2 group
// round(weight x 1024 / 100)), so the ratios NFVnice computes survive, where runc's old range-to-range formula bends
// them.
TEST(CpuWeight, GivesTheCfsWeightOfTheSharesWithinV2sRange) {
  EXPECT_EQ(cpu_weight_of_shares(kDefaultShares), kDefaultWeight);
  EXPECT_EQ(cpu_weight_of_shares(kMinShares), kMinWeight);
  EXPECT_EQ(cpu_weight_of_shares(15), 1u);
  EXPECT_EQ(cpu_weight_of_shares(16), 2u);
  EXPECT_EQ(cpu_weight_of_shares(102400), kMaxWeight);
  EXPECT_EQ(cpu_weight_of_shares(kMaxShares), kMaxWeight);
  auto cfs_weight = [](uint64_t weight) { return (weight * 1024 + 50) / 100; };  // the kernel's, for a v2 group
  for (uint64_t shares : {16u, 192u, 960u, 1024u, 1920u, 3000u, 50000u})
    EXPECT_NEAR(static_cast<double>(cfs_weight(cpu_weight_of_shares(shares))), static_cast<double>(shares), 5.2)
        << shares << " shares: within half a weight unit (5.12 of CFS weight)";
  // A 10:5:1 demand on one core of three NFs: shares 1920:960:192.
  std::vector<NfDemand> nfs = {{.core = 1, .rate_pps = 10, .cost_cycles = 1},
                               {.core = 1, .rate_pps = 5, .cost_cycles = 1},
                               {.core = 1, .rate_pps = 1, .cost_cycles = 1}};
  std::vector<uint64_t> shares = cpu_shares(nfs);
  ASSERT_EQ(shares, (std::vector<uint64_t>{1920, 960, 192}));
  EXPECT_EQ(cpu_weight_of_shares(shares[0]), 188u);
  EXPECT_EQ(cpu_weight_of_shares(shares[1]), 94u);
  EXPECT_EQ(cpu_weight_of_shares(shares[2]), 19u);
  auto runc_old = [](uint64_t s) { return 1 + ((s - 2) * 9999) / 262142; };
  EXPECT_EQ(runc_old(kDefaultShares), 39u) << "why not runc's: the default is not the default";
  EXPECT_EQ(runc_old(shares[0]) * 8, 74u * 8);
  EXPECT_EQ(runc_old(shares[2]), 8u) << "10:1 would become 74:8";
}

}  // namespace
}  // namespace tandem::nfvnice
