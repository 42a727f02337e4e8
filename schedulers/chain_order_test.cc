// Tests of the chain-ordered, chain-interleaved NF order shared by UNiS's wait queues and Bubble's order table.
#include "chain_order.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

TEST(ChainOrder, NonConsecutiveNfsOfAChainKeepTheirOrder) {
  json chain = {{"name", "s"},
                {"traffic", {{"sizes", {{64, 1}}}}},
                {"nfs",
                 {{{"name", "A"}, {"type", "macswap"}, {"core", 1}},
                  {{"name", "B"}, {"type", "macswap"}, {"core", 2}},
                  {{"name", "C"}, {"type", "macswap"}, {"core", 1}},
                  {{"name", "D"}, {"type", "macswap"}, {"core", 1}}}}};
  Deployment d = parse_deployment({{"scheduler", {{"name", "unis"}}}, {"chains", {chain}}});
  EXPECT_EQ(chain_order_on_core(d, 1), (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(chain_order_on_core(d, 2), (std::vector<int>{1}));
}

TEST(ChainOrder, ChainsInterleave) {
  auto chain = [](const std::string& name, int n) {
    json nfs = json::array();
    for (int i = 0; i < n; i++) nfs.push_back({{"name", name + std::to_string(i)}, {"type", "macswap"}, {"core", 1}});
    return json{{"name", name}, {"traffic", {{"sizes", {{64, 1}}}}}, {"nfs", nfs}};
  };
  Deployment d = parse_deployment({{"scheduler", {{"name", "unis"}}}, {"chains", {chain("x", 3), chain("y", 2)}}});
  // x0 x1 x2 are NFs 0-2, y0 y1 are 3-4: first of each chain, then the second of each, then the rest.
  EXPECT_EQ(chain_order_on_core(d, 1), (std::vector<int>{0, 3, 1, 4, 2}));
}

}  // namespace
}  // namespace tandem
