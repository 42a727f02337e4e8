// Tests of the secondaries' launch helpers: address-space randomisation off in the child, and only there.
#include <gtest/gtest.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eal_args.h"

namespace tandem {
namespace {

TEST(WithoutAddressRandomisation, TurnsItOffInTheChildAlone) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    without_address_randomisation();
    _exit((personality(0xffffffff) & ADDR_NO_RANDOMIZE) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(personality(0xffffffff) & ADDR_NO_RANDOMIZE, 0);  // the parent (the manager) keeps its own
}

}  // namespace
}  // namespace tandem
