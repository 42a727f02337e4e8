// gtest main for tests that need DPDK: starts the EAL without hugepages and creates a pool of test frames.
#include <gtest/gtest.h>

#include <rte_eal.h>

#include "packet_test_support.h"

namespace tandem::testing {
namespace {
rte_mempool* pool = nullptr;
}
rte_mempool* test_pool() { return pool; }
}  // namespace tandem::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const char* eal_args[] = {"test",        "--no-huge", "--no-pci",       "--no-shconf",
                            "-m",          "256",       "--no-telemetry", "--log-level=lib.eal:error",
                            "--lcores=0@0"};
  if (rte_eal_init(sizeof(eal_args) / sizeof(eal_args[0]), const_cast<char**>(eal_args)) < 0) {
    fprintf(stderr, "EAL init failed\n");
    return 1;
  }
  tandem::testing::pool =
      rte_pktmbuf_pool_create("test_pool", 8191, 0, tandem::kMbufPrivSize, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  if (tandem::testing::pool == nullptr) {
    fprintf(stderr, "cannot create the test pool\n");
    return 1;
  }
  int rc = RUN_ALL_TESTS();
  rte_eal_cleanup();
  return rc;
}
