// A re-layout's new processes started beside the running ones, while the traffic flows: each attaches in a spare
// slot of the stats zone, on the control core in the manager's naps (run_control_loop.cc), and sleeps there; once all
// did, the entries are held, the NFs drain and the old processes leave (run_relayout.cc), and the staged ones, moved to
// their cores, go on as the new layout's workers in their own slots. The entries are held for the drain and the
// hand-over only: a process's start (EAL's, its NFs' construction) took most of a switch's hold before, and a start
// that fails refuses the switch with nothing changed instead of failing the run.
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <fstream>

#include <rte_cycles.h>

#include "contract/eal_args.h"
#include "contract/run_timing.h"
#include "contract/start_gate.h"
#include "run.h"
#include "worker_launcher.h"

namespace tandem {

namespace {

constexpr double kStagingLookSeconds = 1e-3;

// The first spare slot: past the running workers' and the new plan's, so that neither layout's slots are touched
// while the staged processes wait (the new plan's are cleared for it once the old processes left).
size_t first_staging_slot(const Deployment& running, const std::vector<WorkerPlan>& plan) {
  return std::max(running.workers.size(), plan.size());
}

}  // namespace

bool Run::may_stage(const Relayout& relayout) const {
  // A module's own re-layout that cannot tell its workers before the NFs drained (relayout_begins): none to start.
  if (relayout.plan.empty()) return false;
  size_t to_start = std::count_if(relayout.plan.begin(), relayout.plan.end(),
                                  [](const WorkerPlan& plan) { return plan.runtime != Runtime::External; });
  return first_staging_slot(d_, relayout.plan) + to_start <= static_cast<size_t>(kLifetimeWorkers);
}

std::string Run::staged_deployment_path() const { return d_.paths.run_dir + "/deployment-staged.json"; }

void Run::start_staging() {
  Relayout& relayout = *relayout_;
  // What the staged processes read: the run's deployment as the switch will leave it. The running ones read
  // deployment.json, which stays theirs (a crashed one restarts from it) until the hand-over.
  Deployment next = d_;
  next.workers = relayout.plan;
  next.scheduler = {relayout.name, relayout.options};
  if (relayout.moved_nf >= 0) next.nfs[relayout.moved_nf].core = relayout.moved_to;
  std::ofstream(staged_deployment_path()) << deployment_to_json(next, original_).dump(2);
  relayout.staging = true;
  follow_staging();
}

void Run::follow_staging() {
  Relayout& relayout = *relayout_;
  // Looked at every millisecond, not every turn of the loop: a look is a system call (waitpid).
  uint64_t now = rte_get_tsc_cycles();
  if (now < relayout.next_staging_look_tsc) return;
  relayout.next_staging_look_tsc = now + static_cast<uint64_t>(hz_ * kStagingLookSeconds);
  auto names = [&](int w) {
    std::string listed;
    for (const Segment& segment : relayout.plan[w].segments)
      for (int nf : segment.nfs) listed += (listed.empty() ? "" : ",") + d_.nfs[nf].name;
    return listed;
  };
  // One that ended (killed while it waited, or failed to start) refuses the switch: the old layout runs on.
  for (auto& [w, process] : relayout.staged) {
    auto status = reap_if_exited(process.pid);
    if (!status) continue;
    process.pid = 0;
    bool started = flag_load(stats_->workers[process.slot].ready) != 0;
    return end_relayout_unchanged(
        "NF " + names(w) + (started ? "'s new process ended before the hand-over: " : " failed to start: ") +
        describe_exit(*status) + " (its message, if any, is in the manager log); nothing was changed");
  }
  // One at a time, as at the start (run_lifecycle.cc start_workers): each once the one before attached.
  for (;;) {
    if (!relayout.staged.empty()) {
      auto& [w, last] = *relayout.staged.rbegin();
      if (flag_load(stats_->workers[last.slot].ready) == 0) {
        if (std::optional<std::string> late = relayout.starting->late())
          return end_relayout_unchanged("NF " + names(w) + " did not attach: " + *late + "; nothing was changed");
        return;
      }
      if (last.attach_ms < 0) last.attach_ms = relayout.starting->ms_since_launch();
    }
    size_t next = relayout.staged.empty() ? 0 : static_cast<size_t>(relayout.staged.rbegin()->first) + 1;
    while (next < relayout.plan.size() && relayout.plan[next].runtime == Runtime::External) next++;  // kept
    if (next == relayout.plan.size()) break;
    int slot = static_cast<int>(first_staging_slot(d_, relayout.plan) + relayout.staged.size());
    stats_->workers[slot] = {};
    // Its start on the control core, as an added chain's: on its NF core, below the running NFs' real-time
    // pollers, it would get that CPU only through the kernel's fair server. It moves there at the hand-over.
    WorkerPlan starting = relayout.plan[next];
    starting.core = d_.control_core;
    try {
      pid_t pid =
          launch_tandem_worker(d_, starting, staged_deployment_path(), {.beside_traffic = true, .staging_slot = slot});
      relayout.staged[static_cast<int>(next)] = {.pid = pid, .slot = slot};
      relayout.starting.emplace(pid);
    } catch (const std::exception& e) {
      return end_relayout_unchanged("NF " + names(static_cast<int>(next)) + ": " + e.what() + "; nothing was changed");
    }
  }
  relayout.staging = false;
  hold_entries_for_relayout();
}

void Run::hold_entries_for_relayout() {
  // The module goes on scheduling the NFs while they drain: its order keeps a full ring from overflowing (let go at
  // once, three NFs polling under the kernel's scheduler dropped a thousand packets from an overloaded chain's full
  // rings while they drained).
  uint64_t now = rte_get_tsc_cycles();
  generator_->hold(now);
  relayout_->ring_drops_at_hold = ring_drops_each();
  relayout_->held_tsc = now;
  relayout_->held_s = seconds_since_go(now);
}

void Run::promote_staged(std::map<int, Relayout::Staged>& staged) {
  // All told at once, then each waited for: a staged process goes on within a wake-up.
  for (auto it = staged.begin(); it != staged.end();) {
    auto& [w, process] = *it;
    if (reap_if_exited(process.pid)) {  // died while it waited: started the usual way (launch_planned_workers)
      stats_->workers[process.slot] = {};
      it = staged.erase(it);
      continue;
    }
    give_normal_policy(process.pid);
    if (std::string error = pin_to_core(process.pid, d_.workers[w].core); !error.empty())
      throw std::runtime_error("cannot move NF " + nf_names_of(w) + "'s process to core " +
                               std::to_string(d_.workers[w].core) + ": " + error);
    flag_store(stats_->workers[process.slot].staged, kStagedGoOn);
    wake_staged(stats_->workers[process.slot]);
    ++it;
  }
}

void Run::dismiss_staged(Relayout& relayout) {
  // Attached ones are told to exit; one still starting is killed (it may then hold DPDK's shared memory lock: the
  // EAL is not cleaned up at the end, as after any killed worker).
  for (auto& [w, process] : relayout.staged) {
    if (process.pid <= 0) continue;
    WorkerControl& slot = stats_->workers[process.slot];
    if (flag_load(slot.ready) == 0) {
      kill(process.pid, SIGKILL);
      killed_workers_ = true;
    }
    flag_store(slot.staged, kStagedDismissed);
    wake_staged(slot);
  }
  uint64_t deadline = rte_get_tsc_cycles() + static_cast<uint64_t>(hz_ * kStopSeconds);
  for (auto& [w, process] : relayout.staged) {
    while (process.pid > 0 && !reap_if_exited(process.pid)) {
      if (rte_get_tsc_cycles() > deadline) {
        kill(process.pid, SIGKILL);
        waitpid(process.pid, nullptr, 0);
        killed_workers_ = true;
        break;
      }
      usleep(1000);
    }
    stats_->workers[process.slot] = {};
  }
  relayout.staged.clear();
  relayout.staging = false;
}

}  // namespace tandem
