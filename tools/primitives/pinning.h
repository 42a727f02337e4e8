// Pinning a measurement's threads and processes to one core each: every primitive is timed between known cores.
#pragma once

#include <pthread.h>
#include <sched.h>

namespace tandem {

inline cpu_set_t only_core(int core) {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  CPU_SET(core, &cpus);
  return cpus;
}

// The calling thread alone; false where the core is refused (errno says why).
inline bool pin_this_thread(int core) {
  cpu_set_t cpus = only_core(core);
  return pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus) == 0;
}

// The calling process (its main thread, and the children it forks after); false where the core is refused.
inline bool pin_this_process(int core) {
  cpu_set_t cpus = only_core(core);
  return sched_setaffinity(0, sizeof(cpus), &cpus) == 0;
}

}  // namespace tandem
