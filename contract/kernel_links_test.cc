// Tests of which links of a chain are kernel links: a chain of kernel-I/O NFs, one that mixes them with DPDK NFs per
// node, and the receive buffers the mbuf pool keeps for the packet sockets.
#include <gtest/gtest.h>

#include "contract/deployment.h"

namespace tandem {
namespace {

json router(const std::string& name, const std::string& io = "") {
  json nf = {{"name", name}, {"type", "ttl"}, {"core", 1}};
  if (!io.empty()) nf["io"] = io;
  return nf;
}

Deployment deployment_of(json nfs, bool kernel_chain, uint16_t mux = 8) {
  json chain = {{"name", "c"}, {"traffic", {{"sizes", {{64, 1.0}}}}}, {"nfs", nfs}};
  if (kernel_chain) chain["io"] = {{"kind", "kernel"}, {"mux", mux}, {"link", "b2b"}};
  return parse_deployment({{"scheduler", {{"name", "cfs"}}}, {"chains", {chain}}});
}

std::vector<bool> kernel_links(const Deployment& d) {
  std::vector<bool> kernel;
  for (int ring : d.chains[0].rings) kernel.push_back(d.rings[ring].kernel);
  return kernel;  // entry, a->b, b->c, exit
}

TEST(KernelLinks, EveryLinkOfAKernelChainIsAVethAndNoneOfADpdkChain) {
  EXPECT_EQ(kernel_links(deployment_of({router("a"), router("b"), router("c")}, true)),
            (std::vector<bool>{true, true, true, true}));
  EXPECT_EQ(kernel_links(deployment_of({router("a"), router("b"), router("c")}, false)),
            (std::vector<bool>{false, false, false, false}));
}

TEST(KernelLinks, AMixedChainHasAVethWhereEitherEndIsKernelIo) {
  Deployment middle_kernel = deployment_of({router("a", "dpdk"), router("b", "kernel"), router("c", "dpdk")}, true);
  EXPECT_EQ(kernel_links(middle_kernel), (std::vector<bool>{false, true, true, false}));
  EXPECT_FALSE(middle_kernel.nfs[0].kernel_io);
  EXPECT_TRUE(middle_kernel.nfs[1].kernel_io);
  Deployment middle_dpdk =
      deployment_of({router("a"), router("b", "dpdk"), router("c")}, true);  // no `io`: the chain's
  EXPECT_EQ(kernel_links(middle_dpdk), (std::vector<bool>{true, true, true, true}));
  EXPECT_TRUE(middle_dpdk.nfs[0].kernel_io);
  EXPECT_FALSE(middle_dpdk.nfs[1].kernel_io);
  Deployment last_kernel = deployment_of({router("a", "dpdk"), router("b", "dpdk"), router("c", "kernel")}, true);
  EXPECT_EQ(kernel_links(last_kernel), (std::vector<bool>{false, false, true, true}));
}

TEST(KernelLinks, ThePoolKeepsMuxReceiveBuffersForEverySocketThatReceives) {
  auto pool = [](json nfs, bool kernel_chain, uint16_t mux) {
    return mbuf_pool_size(deployment_of(nfs, kernel_chain, mux));
  };
  json line = {router("a", "dpdk"), router("b", "kernel"), router("c", "dpdk")};
  // Two sockets receive (b's, and c's from b), whatever kind of NF holds them: each keeps `mux` buffers posted.
  EXPECT_EQ(pool(line, true, 64) - pool(line, true, 8), 2u * (64 - 8));
  json all_kernel = {router("a"), router("b"), router("c")};
  EXPECT_EQ(pool(all_kernel, true, 64) - pool(all_kernel, true, 8), 3u * (64 - 8));  // the sink's end is DPDK's port
}

}  // namespace
}  // namespace tandem
