// The pipe ping-pong of two pinned processes under one policy, and the pipe calls' cost without a switch.
#include "context_switch.h"

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "clock.h"
#include "pinning.h"

namespace tandem {

namespace {

constexpr int kRounds = 20000;  // a repetition: ~0.1 s at a few microseconds a round trip
// Between repetitions under a real-time policy: the core's other tasks run, and RT throttling (95 % of each second)
// never cuts a repetition short.
constexpr useconds_t kPauseUs = 60000;

std::string pin_and_set(int core, const std::string& policy) {
  if (!pin_this_process(core)) return "core " + std::to_string(core) + ": " + strerror(errno);
  int linux_policy = policy == "fifo"    ? SCHED_FIFO
                     : policy == "rr"    ? SCHED_RR
                     : policy == "batch" ? SCHED_BATCH
                                         : SCHED_OTHER;
  sched_param param{};
  param.sched_priority = (policy == "fifo" || policy == "rr") ? 1 : 0;
  if (sched_setscheduler(0, linux_policy, &param) != 0) return policy + ": " + strerror(errno);
  return "";
}

void back_to_normal() {
  sched_param param{};
  sched_setscheduler(0, SCHED_OTHER, &param);
}

// One write and one read of a byte on a pipe in one process: the calls a hand-off costs without switching.
double pipe_pair_ns() {
  int p[2];
  if (pipe(p) != 0) return 0;
  char byte = 0;
  uint64_t start = now_ns();
  for (int i = 0; i < kRounds; i++) {
    if (write(p[1], &byte, 1) != 1 || read(p[0], &byte, 1) != 1) break;
  }
  double ns = static_cast<double>(now_ns() - start) / kRounds;
  close(p[0]);
  close(p[1]);
  return ns;
}

}  // namespace

Measurement context_switch_ns(const std::string& policy, int core, int repetitions) {
  if (std::string refused = pin_and_set(core, policy); !refused.empty()) {
    back_to_normal();
    return unsupported(refused);
  }
  Measurement result;
  for (int r = 0; r < repetitions; r++) {
    int there[2], back[2];
    if (pipe(there) != 0 || pipe(back) != 0) return unsupported(std::string("pipe: ") + strerror(errno));
    pid_t child = fork();
    if (child == 0) {  // the partner: hands every token back; bounded by an alarm should the parent vanish
      alarm(10);
      char byte;
      for (int i = 0; i < kRounds; i++)
        if (read(there[0], &byte, 1) != 1 || write(back[1], &byte, 1) != 1) _exit(1);
      _exit(0);
    }
    char byte = 0;
    uint64_t start = now_ns();
    bool complete = true;
    for (int i = 0; i < kRounds && complete; i++)
      complete = write(there[1], &byte, 1) == 1 && read(back[0], &byte, 1) == 1;
    double round_trip = static_cast<double>(now_ns() - start) / kRounds;
    int status = 0;
    waitpid(child, &status, 0);
    for (int fd : {there[0], there[1], back[0], back[1]}) close(fd);
    if (!complete || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      back_to_normal();
      return unsupported("the partner process did not finish its hand-offs");
    }
    // A round trip: two switches, and each side's write and read.
    result.samples_ns.push_back((round_trip - 2 * pipe_pair_ns()) / 2);
    usleep(kPauseUs);
  }
  back_to_normal();
  return result;
}

}  // namespace tandem
