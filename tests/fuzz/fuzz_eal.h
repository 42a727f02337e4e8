// The EAL a fuzz target starts once (no hugepages, no PCI, one lcore) and the small mbuf pool its frames come from.
#pragma once

#include <cstdlib>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "contract/packet_meta.h"

namespace tandem {

// Starts the EAL and makes the pool; aborts if either fails (a fuzz target cannot run without them).
inline rte_mempool* start_eal_with_a_pool() {
  const char* eal_args[] = {"fuzz",        "--no-huge", "--no-pci",       "--no-shconf",
                            "-m",          "128",       "--no-telemetry", "--log-level=lib.eal:error",
                            "--lcores=0@0"};
  if (rte_eal_init(sizeof(eal_args) / sizeof(eal_args[0]), const_cast<char**>(eal_args)) < 0) abort();
  rte_mempool* pool =
      rte_pktmbuf_pool_create("fuzz_pool", 63, 0, kMbufPrivSize, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  if (pool == nullptr) abort();
  return pool;
}

}  // namespace tandem
