// Tests of the cost NF: it spends the configured cycles (or nanoseconds) per packet and per byte, not less and not
// much more (every benchmark's load is these costs).
#include <rte_cycles.h>

#include <algorithm>
#include <limits>

#include "nf_test_support.h"

namespace tandem {
namespace {

// How much more than its budget a batch may take: the NF's own loop and the test's TSC reads are a few hundred
// cycles against budgets of 150 k-1 M here, so 1.6x catches an NF that spends twice its cost with room to spare.
constexpr double kOvershoot = 1.6;
// The fewest TSC cycles one batch took of this many: the kernel or the hypervisor can only add to a batch (a
// preemption, a stolen vCPU), never take from it, so the minimum is the NF's own cost unless every repeat was hit.
constexpr int kRepeats = 9;

uint64_t fewest_cycles_for(NetworkFunction& nf, uint16_t size, int packets) {
  uint64_t fewest = std::numeric_limits<uint64_t>::max();
  for (int r = 0; r < kRepeats; r++) {
    std::vector<rte_mbuf*> frames;
    for (int i = 0; i < packets; i++) frames.push_back(testing::make_frame(i, size));
    uint64_t start = rte_rdtsc();
    auto out = testing::run_batch(nf, frames);
    fewest = std::min(fewest, rte_rdtsc() - start);
    EXPECT_EQ(out.kept.size(), static_cast<size_t>(packets));
    testing::free_all(out.kept);
  }
  return fewest;
}

// The NF spins until its budget has passed on the TSC, so it never takes less; the minimum over the repeats must
// not take much more either.
void expect_spends(NetworkFunction& nf, uint16_t size, int packets, uint64_t budget) {
  uint64_t spent = fewest_cycles_for(nf, size, packets);
  EXPECT_GE(spent, budget);
  EXPECT_LE(spent, static_cast<uint64_t>(kOvershoot * static_cast<double>(budget)))
      << "spent " << spent << " TSC cycles for a budget of " << budget;
}

TEST(Cost, SpendsTheConfiguredCyclesPerPacket) {
  auto nf = testing::make_nf("cost", {{"cycles", 10000}});
  expect_spends(*nf, 64, 32, 32u * 10000);
}

TEST(Cost, VariableCostGrowsWithFrameSize) {
  auto nf = testing::make_nf("cost", {{"cycles", 0}, {"cycles_per_byte", 20.0}});
  // pkt_len excludes the FCS: 1514 bytes x 20 cycles x 32 packets.
  expect_spends(*nf, 1518, 32, 32u * 1514 * 20);
}

TEST(Cost, NanosecondsReplaceCyclesAtTheTscRate) {
  auto nf = testing::make_nf("cost", {{"cycles", 1}, {"ns", 20000.0}});
  uint64_t per_packet = static_cast<uint64_t>(20000e-9 * static_cast<double>(rte_get_tsc_hz()));
  expect_spends(*nf, 64, 8, 8u * per_packet);
}

}  // namespace
}  // namespace tandem
