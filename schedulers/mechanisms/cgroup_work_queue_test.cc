// Tests of the cgroup work queue on a fake cgroup2 tree: work done in the order posted and off the poster's thread,
// drain waiting for it, failures kept (and counted past the cap), nothing posted lost when the queue ends.
#include "cgroup_work_queue.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <future>

#include "fake_cgroup2_test_support.h"

namespace tandem {
namespace {

TEST(CgroupWorkQueue, WorkIsDoneInOrderOffThePostersThread) {
  FakeCgroup2 fake;
  CgroupWorkQueue work(fake);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> blocked{false};
  // The first piece waits as a move waits for a grace period; post returns meanwhile and the rest waits behind it.
  work.post([&](CgroupFiles&) -> std::optional<std::string> {
    blocked = true;
    released.wait();
    return std::nullopt;
  });
  std::string group = fake.root() + "/g";
  work.post([&](CgroupFiles& files) -> std::optional<std::string> {
    EXPECT_EQ(files.make_group(group), 0);
    return std::nullopt;
  });
  work.post([&](CgroupFiles& files) -> std::optional<std::string> {
    EXPECT_EQ(files.remove_group(group), 0) << "made before, by the piece posted before";
    return std::nullopt;
  });
  uint64_t ticket = work.posted();
  EXPECT_EQ(ticket, 3u);
  while (!blocked) usleep(100);
  EXPECT_EQ(work.done(), 0u);
  EXPECT_FALSE(work.done_through(ticket)) << "what a removal waits for before its processes leave";
  EXPECT_FALSE(fake.exists(group)) << "nothing behind a waiting piece runs before it";
  release.set_value();
  work.drain();
  EXPECT_TRUE(work.done_through(ticket));
  EXPECT_EQ(work.done(), 3u);
  EXPECT_FALSE(fake.exists(group));
  EXPECT_FALSE(work.has_failures());
}

TEST(CgroupWorkQueue, FailuresAreKeptInOrderAndCountedPastTheCap) {
  FakeCgroup2 fake;
  CgroupWorkQueue work(fake);
  for (size_t i = 0; i < CgroupWorkQueue::kFailuresKept + 3; i++)
    work.post([i](CgroupFiles&) -> std::optional<std::string> { return "failure " + std::to_string(i); });
  work.drain();
  ASSERT_TRUE(work.has_failures());
  std::vector<std::string> failures = work.take_failures();
  ASSERT_EQ(failures.size(), CgroupWorkQueue::kFailuresKept + 1);
  EXPECT_EQ(failures.front(), "failure 0");
  EXPECT_EQ(failures[CgroupWorkQueue::kFailuresKept - 1],
            "failure " + std::to_string(CgroupWorkQueue::kFailuresKept - 1));
  EXPECT_EQ(failures.back(), "and 3 more cgroup changes failed");
  EXPECT_FALSE(work.has_failures()) << "taken";
  EXPECT_TRUE(work.take_failures().empty());
}

TEST(CgroupWorkQueue, WorkPostedBeforeTheEndIsDoneAndTheLongestTimed) {
  FakeCgroup2 fake;
  std::atomic<int> done{0};
  {
    CgroupWorkQueue work(fake);
    work.post([&](CgroupFiles&) -> std::optional<std::string> {
      usleep(20000);
      done++;
      return std::nullopt;
    });
    for (int i = 0; i < 5; i++)
      work.post([&](CgroupFiles&) -> std::optional<std::string> {
        done++;
        return std::nullopt;
      });
    work.drain();
    EXPECT_GE(work.longest_ms(), 20.0);
  }
  EXPECT_EQ(done, 6);
  {
    CgroupWorkQueue work(fake);
    for (int i = 0; i < 5; i++)
      work.post([&](CgroupFiles&) -> std::optional<std::string> {
        usleep(1000);
        done++;
        return std::nullopt;
      });
  }  // no drain: the end finishes what was posted (a detached module's removals)
  EXPECT_EQ(done, 11);
}

}  // namespace
}  // namespace tandem
