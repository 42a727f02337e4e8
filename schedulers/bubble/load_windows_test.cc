// Tests of the load-measurement schedule: a window at the start of every period, closed after its length.
#include "load_windows.h"

#include <gtest/gtest.h>

namespace tandem::bubble {
namespace {

using Event = LoadWindows::Event;

TEST(LoadWindows, OpensEveryPeriodAndClosesAfterTheWindow) {
  LoadWindows windows(1000, 30);
  EXPECT_EQ(windows.poll(5), Event::Open);
  EXPECT_TRUE(windows.open());
  EXPECT_EQ(windows.poll(20), Event::None);
  EXPECT_EQ(windows.poll(35), Event::Close);
  EXPECT_FALSE(windows.open());
  EXPECT_EQ(windows.poll(500), Event::None);
  EXPECT_EQ(windows.poll(1004), Event::None);
  EXPECT_EQ(windows.poll(1005), Event::Open);
  EXPECT_EQ(windows.opened_at(), 1005u);
}

}  // namespace
}  // namespace tandem::bubble
