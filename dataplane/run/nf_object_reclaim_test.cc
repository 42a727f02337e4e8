// Tests of the reclaim's decisions on real child processes and a recording NF type: a replaced instance's names are
// released once its successor runs, a process's remaining ones once it has exited, and nothing while the run is not
// quiet.
#include "nf_object_reclaim.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "nfs/nf.h"

namespace tandem {
namespace {

using std::chrono::milliseconds;

std::mutex released_mutex;
std::set<std::string> released;  // the instance names release_objects was called with

const NfRegistration recording({
    .name = "reclaim_recording",
    .help = "test type: records the instance names whose objects it is asked to free",
    .create = [](const json&, const NfContext&) -> std::unique_ptr<NetworkFunction> { return nullptr; },
    .release_objects =
        [](const std::string& unique_name) {
          std::lock_guard lock(released_mutex);
          released.insert(unique_name);
          return 1;
        },
});

std::set<std::string> released_now() {
  std::lock_guard lock(released_mutex);
  return released;
}

// Whether `names` are all released within 2 s (the reclaim looks every 100 ms).
bool released_within(const std::set<std::string>& names) {
  for (int i = 0; i < 200; i++) {
    std::set<std::string> now = released_now();
    if (std::includes(now.begin(), now.end(), names.begin(), names.end())) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return false;
}

pid_t child() {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(30);  // never outlives the test
    pause();
    _exit(0);
  }
  return pid;
}

TEST(NfObjectReclaim, ReplacedInstancesGoOnceTheirSuccessorRunsAndTheRestWhenTheProcessHasExited) {
  uint32_t latest = 3;
  NfObjectReclaim reclaim([&](int) { return latest; });
  pid_t pid = child();
  uint64_t serial = reclaim.next_serial();
  reclaim.watch(serial, pid, {{.index = 4, .type = "reclaim_recording"}});
  reclaim.set_quiet(true);
  reclaim.retire(pid, 4, 2);  // it runs generation 2: the spec's instance and generation 1's go
  EXPECT_TRUE(released_within({nf_instance_name(serial, 4, 0), nf_instance_name(serial, 4, 1)}));
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(released_now().count(nf_instance_name(serial, 4, 2)), 0u) << "the running instance was freed";
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);  // reaped: its pid may be anyone's now, its pidfd still says it exited
  EXPECT_TRUE(released_within({nf_instance_name(serial, 4, 2), nf_instance_name(serial, 4, 3)}));
  EXPECT_EQ(reclaim.report()["objects_freed"], 4);
}

TEST(NfObjectReclaim, NothingIsFreedWhileTheRunIsNotQuiet) {
  NfObjectReclaim reclaim([](int) { return 0u; });
  pid_t pid = child();
  uint64_t serial = reclaim.next_serial() + 100;  // names of their own in this binary
  reclaim.watch(serial, pid, {{.index = 1, .type = "reclaim_recording"}});
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(released_now().count(nf_instance_name(serial, 1, 0)), 0u) << "freed while processes may be exiting";
  reclaim.set_quiet(true);
  EXPECT_TRUE(released_within({nf_instance_name(serial, 1, 0)}));
}

}  // namespace
}  // namespace tandem
