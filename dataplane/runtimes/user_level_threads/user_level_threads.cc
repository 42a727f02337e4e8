// User-level threads as Boost.Context fibers, each on its own guarded stack.
#include "user_level_threads.h"

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

namespace tandem {

namespace context = boost::context;

// Packet bursts live on the thread's stack (two arrays of kMaxBurst pointers in the segment runner), so the
// stack is generous; its guard page turns an overflow into a fault instead of silent corruption.
constexpr size_t kStackBytes = 256 * 1024;

struct Thread {
  context::fiber fiber;
  context::fiber* scheduler = nullptr;  // where Yield returns to; lives on the thread's own stack
  bool finished = false;
  std::exception_ptr error;
};

void UserLevelThreads::Yield::operator()() { *thread_->scheduler = std::move(*thread_->scheduler).resume(); }

UserLevelThreads::UserLevelThreads() = default;
UserLevelThreads::~UserLevelThreads() = default;

void UserLevelThreads::spawn(Body body) {
  auto thread = std::make_unique<Thread>();
  Thread* t = thread.get();
  t->fiber = context::fiber(std::allocator_arg, context::protected_fixedsize_stack(kStackBytes),
                            [t, body = std::move(body)](context::fiber&& scheduler) mutable {
                              t->scheduler = &scheduler;
                              Yield yield(t);
                              // An exception must not leave a fiber's entry function: keep it for run_round.
                              try {
                                body(yield);
                              } catch (...) {
                                t->error = std::current_exception();
                              }
                              t->finished = true;
                              return std::move(scheduler);
                            });
  threads_.push_back(std::move(thread));
}

bool UserLevelThreads::run_round() {
  bool any = false;
  for (auto& thread : threads_) {
    if (thread->finished) continue;
    thread->fiber = std::move(thread->fiber).resume();
    switches_++;
    if (thread->error) std::rethrow_exception(std::exchange(thread->error, nullptr));
    any = any || !thread->finished;
  }
  return any;
}

}  // namespace tandem
