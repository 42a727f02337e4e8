// tandem-primitives: measures the primitive latencies the profiler explains packets' time with (SCC Table 2 and
// Fig. 3), a sleeping worker's wake-up on an idle core, and the switches auto's model charges its policies for, on
// this machine, and prints them as JSON. Usage (as root): tandem-primitives [--core N] [--other-core M]
// [--repetitions R] [--quick | --switch-costs]; --switch-costs measures auto's switches alone (a few seconds). It
// runs in a network namespace of its own and leaves nothing behind.
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "cache_line.h"
#include "context_switch.h"
#include "dataplane/runtimes/user_level_threads/switch_cost.h"
#include "idle_wake.h"
#include "pointer_chase.h"
#include "priority_switch.h"
#include "syscall_cost.h"
#include "yield_handoff.h"

using namespace tandem;

namespace {

int usage(const char* message) {
  fprintf(stderr,
          "tandem-primitives: %s\nusage: tandem-primitives [--core N] [--other-core M] [--repetitions R] [--quick]\n",
          message);
  return 2;
}

// A loopback of our own, up, for the packet-socket calls: nothing else sends there.
std::string private_loopback() {
  if (unshare(CLONE_NEWNET) != 0) return std::string("a network namespace of its own: ") + strerror(errno);
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  ifreq request{};
  strcpy(request.ifr_name, "lo");
  bool up =
      ioctl(fd, SIOCGIFFLAGS, &request) == 0 && (request.ifr_flags |= IFF_UP, ioctl(fd, SIOCSIFFLAGS, &request) == 0);
  close(fd);
  return up ? "" : std::string("cannot bring its loopback up: ") + strerror(errno);
}

}  // namespace

int main(int argc, char** argv) {
  int online = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  int core = online - 1, other_core = 0, repetitions = 7;
  bool quick = false, switch_costs_only = false;
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    auto value = [&](int& into) {
      if (i + 1 >= argc) return false;
      try {
        into = std::stoi(argv[++i]);
      } catch (const std::exception&) {
        return false;
      }
      return true;
    };
    if (arg == "--quick")
      quick = true;
    else if (arg == "--switch-costs")
      switch_costs_only = true;
    else if (arg == "--core"          ? !value(core)
             : arg == "--other-core"  ? !value(other_core)
             : arg == "--repetitions" ? !value(repetitions)
                                      : true)
      return usage(("bad argument " + arg).c_str());
  }
  if (core < 0 || core >= online || other_core < 0 || other_core >= online) return usage("no such core");
  if (repetitions < 1 || repetitions > 101) return usage("--repetitions must be 1 to 101");

  json out = {{"core", core}, {"other_core", other_core}, {"repetitions", repetitions}};
  // What auto's model charges each policy for a switch (schedulers/auto/policy_model.h's SwitchCosts).
  out["yield_handoff"] = yield_handoff_ns(core, repetitions).to_json();
  out["priority_switch"] = priority_switch_ns(core, other_core, repetitions).to_json();
  Measurement user_level;
  for (int r = 0; r < repetitions; r++) user_level.samples_ns.push_back(ns_per_user_level_switch(20000));
  out["user_level_switch"] = user_level.to_json();
  if (switch_costs_only) {  // and a sleeping worker's wake-up at a packet a millisecond (rtc-sleep's)
    out["idle_wake"]["1 ms"] = idle_wake_ns(core, other_core, 1.0, repetitions).to_json();
    printf("%s\n", out.dump(1).c_str());
    return 0;
  }
  for (const char* policy : {"cfs", "batch", "rr", "fifo"})
    out["context_switch"][policy] = context_switch_ns(policy, core, repetitions).to_json();
  std::string loopback = private_loopback();
  for (auto& [name, measurement] : syscall_costs(repetitions))
    out["syscall"][name] =
        loopback.empty() || name == "getppid" ? measurement.to_json() : json{{"unsupported", loopback}};
  out["cache_line_transfer"] = cache_line_transfer_ns(core, other_core, repetitions).to_json();
  // A sleeping worker's wake-up after idle spells of a packet every 1, 10 and 100 ms.
  for (double idle_ms : {1.0, 10.0, 100.0})
    out["idle_wake"][std::to_string(static_cast<int>(idle_ms)) + " ms"] =
        idle_wake_ns(core, other_core, idle_ms, repetitions).to_json();
  out["memory"] = json::array();
  size_t largest = quick ? (size_t{16} << 20) : (size_t{256} << 20);
  for (size_t stride : {size_t{64}, size_t{256}, size_t{4096}})
    for (size_t bytes = size_t{4} << 10; bytes <= largest; bytes *= 4) {
      json entry = pointer_chase_ns(bytes, stride, quick ? 3 : repetitions).to_json();
      entry["bytes"] = bytes;
      entry["stride"] = stride;
      out["memory"].push_back(entry);
    }
  printf("%s\n", out.dump(1).c_str());
  return 0;
}
