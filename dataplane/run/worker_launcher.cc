// Worker process start-up and reaping.
#include "worker_launcher.h"

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "contract/eal_args.h"
#include "supervised_spawn.h"

namespace tandem {

pid_t launch_worker(const Deployment& deployment, const WorkerPlan& plan, const std::string& deployment_path,
                    uint64_t serial, WorkerStart start) {
  const int staging_slot = start.staging_slot;
  std::vector<std::string> args = secondary_eal_args(deployment, plan);
  args.insert(args.end(), {"--", "--deployment", deployment_path, "--worker", std::to_string(plan.index), "--serial",
                           std::to_string(serial)});
  if (staging_slot >= 0) args.insert(args.end(), {"--staging", std::to_string(staging_slot)});
  // Its stdout goes to stderr: the manager's stdout is not the workers' to write on. Beside the traffic it starts on
  // the control core with the manager's loop, which carries the traffic (the generator, the sink) and never sleeps
  // but in the naps it leaves a starting process. Under the normal policy the kernel let it run a whole tick (4 ms)
  // at each turn, the loop stopped meanwhile, and the sink's deliveries came in bursts 5 ms apart; SCHED_IDLE gives
  // way the moment the loop wakes.
  return spawn_supervised(deployment.paths.worker_binary, args,
                          {.stdout_to = STDERR_FILENO, .idle_policy = start.beside_traffic});
}

void give_normal_policy(pid_t pid) {
  std::error_code gone;  // exited meanwhile: nothing to give
  sched_param normal{};
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", gone))
    sched_setscheduler(std::stoi(task.path().filename().string()), SCHED_OTHER, &normal);
}

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "ended with wait status " + std::to_string(status);
}

bool has_exited(pid_t pid) {
  siginfo_t info{};
  return pid > 0 && waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

std::optional<int> reap_if_exited(pid_t pid) {
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, WNOHANG) == pid) return status;
  return std::nullopt;
}

}  // namespace tandem
