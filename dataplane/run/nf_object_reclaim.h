// Freeing what NF instances leave in hugepage memory once nothing runs them any more.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "contract/arg_schema.h"  // json

namespace tandem {

// An NF instance's DPDK objects (ACL contexts, hash tables: nfs/nf.h, NfType::release_objects) live in hugepage
// memory, shared by every process of the run. A worker frees none of them: not as it exits (the free of a hugepage
// is an IPC through the manager to every other process, and processes exiting together cannot answer it:
// dataplane/worker/worker_main.cc), not when a live change replaces an instance (dataplane/runtimes/live_args.h),
// and not when it crashes. Left there, a service grew at every re-layout, restart and rules change by every NF's
// tables (a firewall of 1,000 rules and a 262,144-flow counter: 9 hugepages of 2 MiB a switch) until an NF could
// not be built for want of memory.
//
// This frees them from the manager, on a thread of its own so that the IPC never stops the manager's loop: a
// watched process's instances once it has exited (a pidfd tells, which a reused pid cannot fool), a live change's
// replaced instances once the NF's process runs the new generation. It frees only while the manager says the run is
// quiet: no process told to exit or stopped, which would leave the IPC waiting for EAL's timeout.
class NfObjectReclaim {
 public:
  struct Nf {
    int index = 0;
    std::string type;  // its NfType's name
  };

  // `latest_generation(nf)`: the newest generation of arguments given to NF `nf`; an instance is built from at most
  // that one. Called on the reclaim's thread: it must read shared state only (the stats zone).
  explicit NfObjectReclaim(std::function<uint32_t(int nf)> latest_generation);
  ~NfObjectReclaim();  // stops the thread, after the free under way
  NfObjectReclaim(const NfObjectReclaim&) = delete;
  NfObjectReclaim& operator=(const NfObjectReclaim&) = delete;

  // The serial the next worker process is started with (its instances' names: nf_instance_name).
  uint64_t next_serial() { return ++last_serial_; }
  // Watches worker process `pid`, started with `serial` and running `nfs`: its instances' objects are freed once it
  // has exited. Call before anything may reap it.
  void watch(uint64_t serial, pid_t pid, std::vector<Nf> nfs);
  // Process `pid` runs NF `nf` from the arguments of `generation` now: its instances of earlier ones are freed.
  void retire(pid_t pid, int nf, uint32_t generation);
  // Whether it may free now (see the class's comment). Turning it off waits for the free under way. Cheap when the
  // answer is the same as the last one: call it at every turn of the loop.
  void set_quiet(bool quiet);

  // What it freed so far: objects, passes and the time they took (the IPC included).
  json report() const;

 private:
  struct Process {
    uint64_t serial = 0;
    pid_t pid = 0;
    int pidfd = -1;  // -1: none could be opened (a kernel before 5.3): never known gone, never freed
    std::vector<Nf> nfs;
    std::map<int, uint32_t> freed_below;  // per NF: the generations below this one were freed
  };
  struct Release {
    uint64_t serial;
    Nf nf;
    uint32_t from, to;  // the generations [from, to]
  };
  void work();
  // The releases due now: retirements, and processes that exited. Under the lock.
  std::vector<Release> due();

  std::function<uint32_t(int)> latest_generation_;
  uint64_t last_serial_ = 0;
  bool quiet_seen_ = false;  // the loop's last answer, read without the lock

  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  bool stop_ = false, quiet_ = false, busy_ = false;
  std::vector<Process> processes_;
  struct Retirement {
    pid_t pid;
    int nf;
    uint32_t generation;
  };
  std::vector<Retirement> retirements_;
  uint64_t objects_freed_ = 0, passes_ = 0, unwatched_ = 0;
  double seconds_ = 0, longest_s_ = 0;
  std::thread thread_;
};

}  // namespace tandem
