// Tests of the macswap NF.
#include "nf_test_support.h"

namespace tandem {
namespace {

TEST(MacSwap, SwapsAddressesAndKeepsEverything) {
  auto nf = testing::make_nf("macswap");
  rte_mbuf* m = testing::make_frame();
  auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
  rte_ether_addr src = eth->src_addr, dst = eth->dst_addr;
  auto out = testing::run_batch(*nf, {m});
  ASSERT_EQ(out.kept.size(), 1u);
  EXPECT_TRUE(rte_is_same_ether_addr(&eth->src_addr, &dst));
  EXPECT_TRUE(rte_is_same_ether_addr(&eth->dst_addr, &src));
  testing::free_all(out.kept);
}

}  // namespace
}  // namespace tandem
