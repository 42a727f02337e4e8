// DPDK's clean-up at the manager's exit, watched by a thread that ends the process should it hang.
#include "bounded_eal_cleanup.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include <rte_eal.h>

namespace tandem {

void bounded_eal_cleanup(double seconds, int exit_code) {
  std::mutex mutex;
  std::condition_variable finished_changed;
  bool finished = false;
  std::thread watchdog([&] {
    std::unique_lock lock(mutex);
    if (finished_changed.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return finished; })) return;
    // Seen once in CI: the manager spun in rte_eal_cleanup's memory walk for good, on the lock a process had left
    // held. _exit, not exit: DPDK's threads and the lock's waiter go with the process, no destructor runs on them.
    fprintf(stderr,
            "tandem-manager: DPDK's clean-up did not finish within %g s (a process killed inside DPDK holds its "
            "shared memory lock); exiting without it\n",
            seconds);
    fflush(stderr);
    _exit(exit_code);
  });
  rte_eal_cleanup();
  {
    std::lock_guard lock(mutex);
    finished = true;
  }
  finished_changed.notify_one();
  watchdog.join();
}

}  // namespace tandem
