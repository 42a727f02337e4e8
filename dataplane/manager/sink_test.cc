// Tests of the sink's hop-order check.
#include "sink.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

TEST(SinkHops, AcceptsOnlyTheChainInOrder) {
  std::vector<int> chain = {4, 5, 6};
  uint8_t in_order[] = {4, 5, 6};
  uint8_t reordered[] = {4, 6, 5};
  uint8_t repeated[] = {4, 5, 5};
  EXPECT_TRUE(hops_match(in_order, 3, chain));
  EXPECT_FALSE(hops_match(reordered, 3, chain));
  EXPECT_FALSE(hops_match(repeated, 3, chain));
  EXPECT_FALSE(hops_match(in_order, 2, chain));  // skipped the last NF
  uint8_t extra[] = {4, 5, 6, 6};
  EXPECT_FALSE(hops_match(extra, 4, chain));
}

}  // namespace
}  // namespace tandem
