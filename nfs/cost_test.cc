// Tests of the cost NF: it spends at least the configured cycles (or nanoseconds) per packet and per byte.
#include <rte_cycles.h>

#include "nf_test_support.h"

namespace tandem {
namespace {

uint64_t cycles_for(NetworkFunction& nf, uint16_t size, int packets) {
  std::vector<rte_mbuf*> frames;
  for (int i = 0; i < packets; i++) frames.push_back(testing::make_frame(i, size));
  uint64_t start = rte_rdtsc();
  auto out = testing::run_batch(nf, frames);
  uint64_t spent = rte_rdtsc() - start;
  EXPECT_EQ(out.kept.size(), static_cast<size_t>(packets));
  testing::free_all(out.kept);
  return spent;
}

TEST(Cost, SpendsAtLeastTheConfiguredCyclesPerPacket) {
  auto nf = testing::make_nf("cost", {{"cycles", 10000}});
  EXPECT_GE(cycles_for(*nf, 64, 32), 32u * 10000);
}

TEST(Cost, VariableCostGrowsWithFrameSize) {
  auto nf = testing::make_nf("cost", {{"cycles", 0}, {"cycles_per_byte", 20.0}});
  // pkt_len excludes the FCS: 1514 bytes x 20 cycles x 32 packets.
  EXPECT_GE(cycles_for(*nf, 1518, 32), 32u * 1514 * 20);
}

TEST(Cost, NanosecondsReplaceCyclesAtTheTscRate) {
  auto nf = testing::make_nf("cost", {{"cycles", 1}, {"ns", 20000.0}});
  uint64_t per_packet = static_cast<uint64_t>(20000e-9 * static_cast<double>(rte_get_tsc_hz()));
  EXPECT_GE(cycles_for(*nf, 64, 8), 8u * per_packet);
}

}  // namespace
}  // namespace tandem
