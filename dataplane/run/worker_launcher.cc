// Worker process start-up and reaping.
#include "worker_launcher.h"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "contract/eal_args.h"

namespace tandem {

pid_t launch_worker(const Deployment& deployment, const WorkerPlan& plan, const std::string& deployment_path,
                    uint64_t serial, WorkerStart start) {
  const int staging_slot = start.staging_slot;
  std::vector<std::string> args = secondary_eal_args(deployment, plan);
  args.insert(args.end(), {"--", "--deployment", deployment_path, "--worker", std::to_string(plan.index), "--serial",
                           std::to_string(serial)});
  if (staging_slot >= 0) args.insert(args.end(), {"--staging", std::to_string(staging_slot)});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + strerror(errno));
  if (pid == 0) {
    // A busy-polling worker must never outlive its manager: with a real-time policy it would freeze its core.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    dup2(STDERR_FILENO, STDOUT_FILENO);  // the manager's stdout is not the workers' to write on
    signal(SIGINT, SIG_IGN);             // the manager decides when workers stop
    without_address_randomisation();
    // Beside the traffic it starts on the control core with the manager's loop, which carries the traffic (the
    // generator, the sink) and never sleeps but in the naps it leaves a starting process. Under the normal policy
    // the kernel let it run a whole tick (4 ms) at each turn, the loop stopped meanwhile, and the sink's deliveries
    // came in bursts 5 ms apart; SCHED_IDLE gives way the moment the loop wakes. Its threads inherit it.
    if (start.beside_traffic) {
      sched_param none{};
      sched_setscheduler(0, SCHED_IDLE, &none);
    }
    execv(deployment.paths.worker_binary.c_str(), argv.data());
    fprintf(stderr, "tandem-manager: cannot execute %s: %s\n", deployment.paths.worker_binary.c_str(), strerror(errno));
    _exit(127);
  }
  return pid;
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
