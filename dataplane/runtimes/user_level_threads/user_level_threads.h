// Stackful user-level threads on Boost.Context: a worker runs several NFs on one kernel thread and switches
// between them in user space (Bubble's local scheduler), with no system call on a switch.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

namespace tandem {

class UserLevelThreads {
 public:
  // Handed to a thread's body: calling it returns control to the scheduler, which resumes the thread on its
  // next turn.
  class Yield {
   public:
    void operator()();

   private:
    friend class UserLevelThreads;
    struct Thread* thread_;
    explicit Yield(Thread* thread) : thread_(thread) {}
  };
  using Body = std::function<void(Yield&)>;

  UserLevelThreads();
  ~UserLevelThreads();
  UserLevelThreads(const UserLevelThreads&) = delete;
  UserLevelThreads& operator=(const UserLevelThreads&) = delete;

  // Adds a thread; it first runs on the next round.
  void spawn(Body body);
  // Resumes every unfinished thread once, in spawn order (the order table), each until it yields or returns.
  // Returns false once every thread has returned. An exception escaping a body is rethrown here.
  bool run_round();
  uint64_t switches() const { return switches_; }

 private:
  std::vector<std::unique_ptr<Thread>> threads_;
  uint64_t switches_ = 0;
};

}  // namespace tandem
