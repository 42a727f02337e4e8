// Tests of the manager's bounded DPDK clean-up: with DPDK's shared memory lock held for good (as a process killed
// inside DPDK leaves it), the process still ends, with the run's exit code and a line that says why.
#include "bounded_eal_cleanup.h"

#include <gtest/gtest.h>

#include <rte_eal_memconfig.h>

namespace tandem {
namespace {

TEST(BoundedEalCleanup, EndsTheProcessWithTheRunsCodeWhenTheMemoryLockIsNeverLetGo) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        rte_mcfg_mem_write_lock();  // the clean-up's memory walk waits on it for ever
        bounded_eal_cleanup(0.2, 7);
      },
      testing::ExitedWithCode(7), "did not finish within 0.2 s");
}

}  // namespace
}  // namespace tandem
