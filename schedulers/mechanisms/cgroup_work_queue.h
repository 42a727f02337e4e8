// Cgroup changes carried out in the order asked on a thread of their own, away from the control loop.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cgroup_files.h"

namespace tandem {

// Why a thread: the first process moved between groups after a quiet spell waits for an RCU grace period (the
// cgroup threadgroup semaphore's rcu_sync; 7-30 ms measured here) and holds the cgroup mutex meanwhile, so any mkdir,
// rmdir or move made in the loop then waits too. One thread and one order: a group is made before a process is moved
// into it, and a detaching module's removals come before the next module's creations of the same names.
class CgroupWorkQueue {
 public:
  // One piece of work; it returns what went wrong (naming the file), or nothing.
  using Work = std::function<std::optional<std::string>(CgroupFiles&)>;

  explicit CgroupWorkQueue(CgroupFiles& files = kernel_cgroup_files());
  ~CgroupWorkQueue();  // finishes what was asked, then ends its thread
  CgroupWorkQueue(const CgroupWorkQueue&) = delete;
  CgroupWorkQueue& operator=(const CgroupWorkQueue&) = delete;

  void post(Work work);
  // Returns once everything posted before the call is done.
  void drain();
  // A ticket for what was posted so far, and whether the work it covers is done (for a caller that must not wait).
  uint64_t posted() const;
  bool done_through(uint64_t ticket) const { return done() >= ticket; }
  // What failed since the last call, oldest first (at most kFailuresKept, then a count of the rest).
  std::vector<std::string> take_failures();
  bool has_failures() const;
  uint64_t done() const;
  double longest_ms() const;  // the longest piece of work: what the loop would have waited for
  // The system calls the work makes, for a caller's own where it need not wait (a write to a file kept open).
  CgroupFiles& files() { return files_; }

  static constexpr size_t kFailuresKept = 32;

 private:
  void serve();

  CgroupFiles& files_;
  mutable std::mutex mutex_;
  std::condition_variable posted_, finished_;
  std::deque<Work> waiting_;
  uint64_t posted_count_ = 0, done_ = 0;
  double longest_ms_ = 0;
  std::vector<std::string> failures_;
  uint64_t failures_dropped_ = 0;
  bool stopping_ = false;
  std::thread thread_;  // last: it starts once everything above is built
};

}  // namespace tandem
