// Two pinned processes passing a turn back and forth with sched_yield, timed over many turns.
#include "yield_handoff.h"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "clock.h"
#include "pinning.h"

namespace tandem {

namespace {

constexpr int kTurns = 20000;  // a repetition: some tens of milliseconds at a microsecond or two a turn

// Waits for `mine`, yielding the core meanwhile, then gives the turn to the other side; `turns` times.
void take_turns(std::atomic<int>& turn, int mine, int turns) {
  for (int i = 0; i < turns; i++) {
    while (turn.load(std::memory_order_acquire) != mine) sched_yield();
    turn.store(1 - mine, std::memory_order_release);
  }
}

}  // namespace

Measurement yield_handoff_ns(int core, int repetitions) {
  void* shared = mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) return unsupported(std::string("mmap: ") + strerror(errno));
  auto* turn = new (shared) std::atomic<int>(0);
  cpu_set_t before;
  sched_getaffinity(0, sizeof(before), &before);
  Measurement result;
  if (!pin_this_process(core)) result = unsupported("core " + std::to_string(core) + ": " + strerror(errno));
  for (int r = 0; r < repetitions && result.unsupported.empty(); r++) {
    turn->store(0);
    pid_t child = fork();
    if (child == 0) {  // the other side: bounded should the parent vanish
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      alarm(10);
      take_turns(*turn, 1, kTurns);
      _exit(0);
    }
    if (child < 0) {
      result = unsupported(std::string("fork: ") + strerror(errno));
      break;
    }
    uint64_t start = now_ns();
    take_turns(*turn, 0, kTurns);
    while (turn->load() != 0) sched_yield();  // the other side's last turn passed back
    uint64_t elapsed = now_ns() - start;
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      result = unsupported("the other process did not finish its turns");
      break;
    }
    result.samples_ns.push_back(static_cast<double>(elapsed) / (2.0 * kTurns));
  }
  sched_setaffinity(0, sizeof(before), &before);
  munmap(shared, sizeof(std::atomic<int>));
  return result;
}

}  // namespace tandem
