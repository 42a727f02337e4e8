// Tests of the drop NF: the dropped fraction, and the extremes 0 and 1.
#include "nf_test_support.h"

namespace tandem {
namespace {

uint64_t dropped_of(double fraction, int packets) {
  auto nf = testing::make_nf("drop", {{"fraction", fraction}});
  uint64_t dropped = 0;
  for (int done = 0; done < packets; done += 32) {
    std::vector<rte_mbuf*> frames;
    for (int i = 0; i < 32; i++) frames.push_back(testing::make_frame(i));
    auto out = testing::run_batch(*nf, frames);
    dropped += out.dropped;
    EXPECT_EQ(out.kept.size() + out.dropped, 32u);
    testing::free_all(out.kept);
  }
  return dropped;
}

TEST(Drop, ExtremesAreExact) {
  EXPECT_EQ(dropped_of(0.0, 3200), 0u);
  EXPECT_EQ(dropped_of(1.0, 3200), 3200u);
}

TEST(Drop, FractionIsApproximatelyRight) {
  // 32000 Bernoulli(0.25) draws: the standard deviation is ~77, so +-600 is over 7 sigma.
  uint64_t dropped = dropped_of(0.25, 32000);
  EXPECT_NEAR(static_cast<double>(dropped), 8000.0, 600.0);
}

}  // namespace
}  // namespace tandem
