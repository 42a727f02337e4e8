// Tests of the counter NF: one table entry per distinct 5-tuple, everything forwarded.
#include "nf_test_support.h"

namespace tandem {
namespace {

TEST(Counter, CountsDistinctFlows) {
  auto nf = testing::make_nf("counter", {{"max_flows", 1024}});
  std::vector<rte_mbuf*> frames;
  for (int i = 0; i < 30; i++) frames.push_back(testing::make_frame(i % 10));
  frames.push_back(testing::make_frame(3, 64, IPPROTO_TCP));  // same addresses, other protocol: a new flow
  auto out = testing::run_batch(*nf, frames);
  EXPECT_EQ(out.kept.size(), 31u);
  EXPECT_EQ(nf->report()["flows"], 11);
  testing::free_all(out.kept);
}

}  // namespace
}  // namespace tandem
