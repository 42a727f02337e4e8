// Test support: two child processes pinned to the last CPU, each counting in shared memory as fast as it can.
#pragma once

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <utility>

namespace tandem {

class Spinners {
 public:
  Spinners() {
    counters_ =
        static_cast<volatile uint64_t*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    int cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
    cpu_set_t mine, theirs;
    CPU_ZERO(&mine);
    CPU_SET(0, &mine);
    sched_setaffinity(0, sizeof(mine), &mine);  // the test itself stays off the children's core
    CPU_ZERO(&theirs);
    CPU_SET(cpus - 1, &theirs);
    for (int i = 0; i < 2; i++) {
      pid_t pid = fork();
      if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test
        sched_setaffinity(0, sizeof(theirs), &theirs);
        for (;;) counters_[i * 8] = counters_[i * 8] + 1;
      }
      pids_[i] = pid;
    }
  }
  ~Spinners() {
    for (pid_t pid : pids_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    munmap(const_cast<uint64_t*>(counters_), 4096);
  }
  pid_t pid(int i) const { return pids_[i]; }
  uint64_t count(int i) const { return counters_[i * 8]; }
  // Which of the two made progress over 100 ms (longer than an RT-throttling gap of 50 ms).
  std::pair<bool, bool> progress() const {
    uint64_t a = counters_[0], b = counters_[8];
    usleep(100000);
    return {counters_[0] != a, counters_[8] != b};
  }

 private:
  volatile uint64_t* counters_;
  pid_t pids_[2] = {0, 0};
};

}  // namespace tandem
