// Tests of Eq. 1 against the values the SCC paper gives for it (Sec. 6.2.1).
#include "quantum.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

TEST(SccQuantum, MatchesThePapersValues) {
  EXPECT_DOUBLE_EQ(eq1_quantum_ms(0), 100.0);  // "without modifying the nice value, a process can run for up to 100 ms"
  EXPECT_DOUBLE_EQ(eq1_quantum_ms(-1), 420.0);   // nice -1 (P = 119): 420 ms
  EXPECT_DOUBLE_EQ(eq1_quantum_ms(-19), 780.0);  // nice -19 (P = 101): the paper's "800 ms", roughly
  EXPECT_DOUBLE_EQ(eq1_quantum_ms(19), 5.0);     // the lowest priority
}

}  // namespace
}  // namespace tandem
