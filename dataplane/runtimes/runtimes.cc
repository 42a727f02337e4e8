// The table of worker runtimes: a new runtime is a folder beside these and one line here.
#include <stdexcept>

#include "poll_loop/poll_loop.h"
#include "runtime.h"
#include "user_level_threads/ult_loop.h"

namespace tandem {

const WorkerRuntime& worker_runtime(Runtime runtime) {
  static const WorkerRuntime poll_loop{run_poll_loop, [](const SegmentRuntime&, const StatsZone&, int) { return true; }};
  static const WorkerRuntime user_level_threads{run_ult_loop, ult_loop_ran};
  switch (runtime) {
    case Runtime::PollLoop: return poll_loop;
    case Runtime::UserLevelThreads: return user_level_threads;
    case Runtime::External: break;
  }
  throw std::invalid_argument("the external runtime has no worker process: the manager starts the application");
}

}  // namespace tandem
