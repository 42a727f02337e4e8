// The cgroup work queue's thread: it takes the work in order, times it, and keeps what failed for the caller.
#include "cgroup_work_queue.h"

#include <pthread.h>

#include <chrono>

namespace tandem {

CgroupWorkQueue::CgroupWorkQueue(CgroupFiles& files) : files_(files), thread_([this] { serve(); }) {
  pthread_setname_np(thread_.native_handle(), "tandem-cgroups");
}

CgroupWorkQueue::~CgroupWorkQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  posted_.notify_one();
  thread_.join();
}

void CgroupWorkQueue::post(Work work) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    waiting_.push_back(std::move(work));
    posted_count_++;
  }
  posted_.notify_one();
}

void CgroupWorkQueue::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  uint64_t target = posted_count_;
  finished_.wait(lock, [&] { return done_ >= target; });
}

std::vector<std::string> CgroupWorkQueue::take_failures() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> taken = std::move(failures_);
  if (failures_dropped_ > 0)
    taken.push_back("and " + std::to_string(failures_dropped_) + " more cgroup changes failed");
  failures_.clear();
  failures_dropped_ = 0;
  return taken;
}

uint64_t CgroupWorkQueue::posted() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return posted_count_;
}

bool CgroupWorkQueue::has_failures() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !failures_.empty();
}

uint64_t CgroupWorkQueue::done() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

double CgroupWorkQueue::longest_ms() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return longest_ms_;
}

void CgroupWorkQueue::serve() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    posted_.wait(lock, [&] { return stopping_ || !waiting_.empty(); });
    if (waiting_.empty()) return;  // stopping, with everything done
    Work work = std::move(waiting_.front());
    waiting_.pop_front();
    lock.unlock();
    auto start = std::chrono::steady_clock::now();
    std::optional<std::string> failure = work(files_);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    lock.lock();
    done_++;
    if (ms > longest_ms_) longest_ms_ = ms;
    if (failure) {
      if (failures_.size() < kFailuresKept)
        failures_.push_back(std::move(*failure));
      else
        failures_dropped_++;
    }
    finished_.notify_all();
  }
}

}  // namespace tandem
