// Unit tests for the busy history traced packets read their NF's other work from.
#include "busy_history.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace tandem {
namespace {

constexpr uint64_t kApart = BusyHistory::kSpacingCycles;

TEST(BusyHistory, CountsTheWorkOfBatchesEndedSinceAMoment) {
  BusyHistory history;
  history.record(1 * kApart, 10);
  history.record(2 * kApart, 20);
  history.record(3 * kApart, 30);
  EXPECT_EQ(history.busy_since(5 * kApart / 2), 30u);  // only the batch ending at 3
  EXPECT_EQ(history.busy_since(2 * kApart), 30u);      // a batch ending exactly then was done before the packet arrived
  EXPECT_EQ(history.busy_since(3 * kApart / 2), 50u);
  EXPECT_EQ(history.busy_since(3 * kApart), 0u);
}

TEST(BusyHistory, BatchesCloserThanItsSpacingShareAnEntry) {
  BusyHistory history;
  history.record(10 * kApart, 10);
  history.record(20 * kApart, 5);
  history.record(20 * kApart + kApart / 2, 7);  // merged into the entry before: it now ends here with both
  EXPECT_EQ(history.busy_since(15 * kApart), 12u);
  // Within the spacing of an entry the split is that coarse: the batch that ended at 20 counts after it too.
  EXPECT_EQ(history.busy_since(20 * kApart + 1), 12u);
  EXPECT_EQ(history.busy_since(21 * kApart), 0u);
}

TEST(BusyHistory, BeforeTheFirstBatchEverythingCounts) {
  BusyHistory history;
  EXPECT_EQ(history.busy_since(5), 0u);
  history.record(kApart, 10);
  EXPECT_EQ(history.busy_since(5), 10u);
}

TEST(BusyHistory, AWaitOlderThanItRemembersIsUnknown) {
  BusyHistory history;
  for (uint64_t b = 1; b <= BusyHistory::kBatches + 10; b++) history.record(b * kApart, 1);
  EXPECT_EQ(history.busy_since(kApart / 2), kBusyUnknown);  // before every remembered batch, some forgotten
  EXPECT_EQ(history.busy_since((BusyHistory::kBatches + 8) * kApart), 2u);
}

TEST(BusyHistory, FindsTheSameBatchesAsCountingThemOneByOne) {
  BusyHistory history;
  std::vector<std::pair<uint64_t, uint64_t>> batches;  // end, work: every one kept (fewer entries than remembered)
  uint64_t end = 0;
  for (uint64_t b = 1; b <= 700; b++) {
    end += kApart + (b * 7919) % (3 * kApart);
    batches.push_back({end, b});
    history.record(end, b);
  }
  for (uint64_t since = 0; since <= end + kApart; since += kApart / 3) {
    uint64_t expected = 0;
    for (const auto& [batch_end, work] : batches)
      if (batch_end > since) expected += work;
    ASSERT_EQ(history.busy_since(since), expected) << "since " << since;
  }
}

}  // namespace
}  // namespace tandem
