// The other threads of a process that a backend stops and resumes, kept on the core of the task it schedules.
#include "bystander_threads.h"

#include <dirent.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace tandem {

pid_t process_of(pid_t task) {
  std::ifstream status("/proc/" + std::to_string(task) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Tgid:", 0) == 0) return static_cast<pid_t>(std::stol(line.substr(5)));
  return task;
}

int BystanderThreads::gather(pid_t task) {
  cpu_set_t where{};
  if (sched_getaffinity(task, sizeof where, &where) != 0) return 0;  // gone: the manager names the NF
  const pid_t process = process_of(task);
  const std::string tasks = "/proc/" + std::to_string(process) + "/task";
  DIR* dir = opendir(tasks.c_str());
  if (dir == nullptr) return 0;
  int moved = 0;
  while (const dirent* entry = readdir(dir)) {
    pid_t thread = static_cast<pid_t>(std::atoi(entry->d_name));
    if (thread <= 0 || thread == task) continue;
    cpu_set_t was{};
    if (sched_getaffinity(thread, sizeof was, &was) != 0) continue;  // exited meanwhile
    if (CPU_EQUAL(&was, &where)) continue;
    if (sched_setaffinity(thread, sizeof where, &where) != 0) continue;
    moved_.push_back({.thread = thread, .process = process, .was = was});
    moved++;
  }
  closedir(dir);
  return moved;
}

void BystanderThreads::release() noexcept {
  for (const Moved& m : moved_)
    if (process_of(m.thread) == m.process) sched_setaffinity(m.thread, sizeof m.was, &m.was);  // not a reused id
  moved_.clear();
}

}  // namespace tandem
