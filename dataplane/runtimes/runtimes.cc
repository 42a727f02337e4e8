// The table of worker runtimes: a new runtime is a folder beside these and one line here.
#include <stdexcept>

#include "kernel_io/kernel_io_loop.h"
#include "poll_loop/poll_loop.h"
#include "runtime.h"
#include "user_level_threads/ult_loop.h"

namespace tandem {

namespace {
// A runtime whose worker runs each of its segments itself (only Bubble's hand NFs between workers).
bool ran_every_segment(const SegmentRuntime&, const StatsZone&, int) { return true; }
}  // namespace

const WorkerRuntime& worker_runtime(Runtime runtime) {
  static const WorkerRuntime poll_loop{run_poll_loop, ran_every_segment};
  static const WorkerRuntime user_level_threads{run_ult_loop, ult_loop_ran};
  static const WorkerRuntime kernel_io{run_kernel_io_loop, ran_every_segment};
  switch (runtime) {
    case Runtime::PollLoop:
      return poll_loop;
    case Runtime::UserLevelThreads:
      return user_level_threads;
    case Runtime::KernelIo:
      return kernel_io;
    case Runtime::External:
      break;
  }
  throw std::invalid_argument("the external runtime has no worker process: the manager starts the application");
}

}  // namespace tandem
