// Tests of the pass μNF.
#include <cstring>

#include "nf_test_support.h"

namespace tandem {
namespace {

TEST(Pass, ForwardsEveryPacketUnchangedOnGateZero) {
  auto nf = testing::make_nf("pass");
  std::vector<rte_mbuf*> frames = {testing::make_frame(0), testing::make_frame(1)};
  std::vector<uint8_t> before(rte_pktmbuf_pkt_len(frames[1]));
  memcpy(before.data(), rte_pktmbuf_mtod(frames[1], uint8_t*), before.size());
  auto out = testing::run_batch(*nf, frames);
  ASSERT_EQ(out.kept, frames);
  EXPECT_EQ(out.dropped, 0);
  EXPECT_EQ(out.gates, (std::vector<uint8_t>{0, 0}));
  EXPECT_EQ(memcmp(before.data(), rte_pktmbuf_mtod(frames[1], uint8_t*), before.size()), 0);
  testing::free_all(out.kept);
}

}  // namespace
}  // namespace tandem
