// Supervised children started by clone(CLONE_VM | CLONE_VFORK): the child's steps before its exec.
#include "supervised_spawn.h"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "contract/eal_args.h"

extern char** environ;

namespace tandem {

namespace {

// The child runs on this stack, in the manager's memory, until its exec; what it calls needs little of it.
constexpr size_t kChildStackBytes = 64 * 1024;

struct ChildStart {
  const char* binary;
  char* const* argv;
  ChildSetup setup;
  pid_t parent;
  sigset_t mask;       // the manager's signal mask, the program's again at its exec
  int exec_errno = 0;  // written by the child (the memory is shared) when its exec failed
};

// Only system calls from here to the exec: the child shares the manager's memory (and its thread's errno), and the
// manager's thread is suspended meanwhile, so nothing it holds (a lock, the allocator) may be taken.
int child_main(void* argument) {
  auto* start = static_cast<ChildStart*>(argument);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != start->parent) _exit(1);  // the manager died before the line above
  const ChildSetup& setup = start->setup;
  if (setup.stdin_from >= 0) dup2(setup.stdin_from, STDIN_FILENO);
  if (setup.stdout_to >= 0) dup2(setup.stdout_to, STDOUT_FILENO);
  if (setup.stderr_to >= 0) dup2(setup.stderr_to, STDERR_FILENO);
  // Every signal is blocked since before the clone: a handler of the manager's must not run in the child, in the
  // manager's memory. The ones the manager handles go back to their defaults (an exec would do it, but the mask
  // is lifted before the exec), SIGINT is ignored.
  for (int sig = 1; sig < NSIG; sig++) {
    struct sigaction current {};
    if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, nullptr, &current) != 0) continue;
    if (current.sa_handler == SIG_IGN || current.sa_handler == SIG_DFL) continue;
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigaction(sig, &fallback, nullptr);
  }
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, nullptr);
  without_address_randomisation();
  if (setup.idle_policy) {
    sched_param none{};
    sched_setscheduler(0, SCHED_IDLE, &none);
  }
  sigprocmask(SIG_SETMASK, &start->mask, nullptr);
  execve(start->binary, start->argv, environ);
  start->exec_errno = errno;
  _exit(127);
}

}  // namespace

pid_t spawn_supervised(const std::string& binary, const std::vector<std::string>& args, const ChildSetup& setup) {
  std::vector<std::string> copies = args;
  std::vector<char*> argv;
  for (std::string& arg : copies) argv.push_back(arg.data());
  argv.push_back(nullptr);
  void* stack = mmap(nullptr, kChildStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED)
    throw std::runtime_error(std::string("cannot map a stack to start a process: ") + strerror(errno));
  ChildStart start{binary.c_str(), argv.data(), setup, getpid(), {}};
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &start.mask);
  // Returns once the child has executed the program or exited.
  pid_t pid = clone(child_main, static_cast<char*>(stack) + kChildStackBytes, CLONE_VM | CLONE_VFORK | SIGCHLD, &start);
  int clone_errno = errno;
  pthread_sigmask(SIG_SETMASK, &start.mask, nullptr);
  munmap(stack, kChildStackBytes);
  if (pid < 0) throw std::runtime_error(std::string("cannot start a process: ") + strerror(clone_errno));
  if (start.exec_errno != 0)
    fprintf(stderr, "tandem-manager: cannot execute %s: %s\n", binary.c_str(), strerror(start.exec_errno));
  return pid;
}

}  // namespace tandem
