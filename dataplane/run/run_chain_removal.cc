// A chain removed from a running service: its entry closed first, what is inside drained through its NFs to the
// sink, then its NF processes told to leave their loops (its unmodified applications asked to exit, one at a time)
// and reaped, the other chains' traffic untouched.
#include <signal.h>

#include <algorithm>
#include <set>

#include <rte_cycles.h>

#include "contract/eal_args.h"
#include "contract/idle_wait.h"
#include "run.h"

namespace tandem {

namespace {

// How long a removed chain may take to drain before its processes are stopped all the same (what is still inside
// then stays counted in flight, in its rings); and how long they may take to leave their loops.
constexpr double kDrainSeconds = 3.0;
constexpr double kLeaveSeconds = 5.0;
// How long a removed chain's kernel links' receivers take nothing before what they miss counts as lost in them.
constexpr double kKernelQuietSeconds = 0.1;

json refused(const json& command, const std::string& message) { return removal_refusal(command, "chain", message); }

}  // namespace

std::string Run::why_chain_cannot_go(int chain) const {
  if (chain_removed_[chain]) return "the chain was removed already";
  for (const ChainRemoval& removal : removals_)
    if (removal.chain == chain) return "the chain is being removed";
  if (restart_pending()) return "an NF is restarting: remove the chain once it is back";
  if (relayout_) return "the NFs are being laid out for another scheduler: remove the chain once it is answered";
  for (const WorkerPlan& plan : d_.workers)
    for (const Segment& segment : plan.segments)
      for (int nf : segment.nfs) {
        if (d_.nfs[nf].chain != chain) continue;
        if (plan.runtime == Runtime::External) continue;  // its own process: asked to exit, as at a run's end
        if (plan.runtime == Runtime::UserLevelThreads)
          return "NF '" + d_.nfs[nf].name +
                 "' runs as a user-level thread, in a process of the core's NFs: remove it by restarting the service";
        for (const Segment& other : plan.segments)
          for (int member : other.nfs)
            if (d_.nfs[member].chain != chain)
              return "NF '" + d_.nfs[nf].name + "' shares its process with NF '" + d_.nfs[member].name +
                     "' of another chain (" + d_.scheduler.name + " runs a core's NFs in one)";
      }
  return "";
}

void Run::remove_chain(const json& command, double now_s) {
  std::string name = command.value("chain", std::string());
  auto found = std::find_if(d_.chains.begin(), d_.chains.end(), [&](const ChainConfig& c) { return c.name == name; });
  if (found == d_.chains.end()) return answer_change(refused(command, "no chain named '" + name + "'"));
  int chain = found->index;
  if (std::string why = why_chain_cannot_go(chain); !why.empty()) return answer_change(refused(command, why));
  ChainRemoval removal{command.value("id", json()), chain, {}, now_s, rte_get_tsc_cycles(), ring_drops_each()};
  for (const WorkerPlan& plan : d_.workers)
    if (d_.nfs[plan.segments.front().nfs.front()].chain == chain) removal.workers.push_back(plan.index);
  // No packet enters it from now on; what is inside goes on to the sink. Its port's frames for it are dropped
  // there from now on, counted (never passed on: they would cross without its NFs).
  generator_->close_chain(chain);
  autoscaler_->forget_chain(chain);
  removal.generated = generator_->generated(chain);
  removals_.push_back(std::move(removal));
}

bool Run::ask_external_to_exit(size_t w, double now_s) {
  if (external_exiting_ && workers_[external_exiting_->first].exited) external_exiting_.reset();
  if (external_exiting_) return external_exiting_->first == w;
  // testpmd frees its hugepage memory as it exits, each free a round through the manager to every other process;
  // one exiting at the same moment never answers, and the free waits out EAL's 5 s (stop_externals_one_by_one).
  // Its forwarding thread goes to the control core, where it runs at once: on its NF core, beside the real-time
  // pollers a fresh module keeps, it would see the request only through the kernel's fair server.
  if (pid_t thread = externals_[w]->thread()) confine_to_control_core(d_.control_core, thread);
  externals_[w]->request_stop();
  external_exiting_ = {w, now_s};
  return true;
}

bool Run::all_left(int chain) const {
  const ChainConfig& config = d_.chains[chain];
  uint64_t entered = generator_->generated(chain), left = sink_->delivery(chain).delivered;
  left += counter_read(stats_->chains[chain].entry_backpressure);
  for (int ring : config.rings) left += counter_read(stats_->rings[ring].dropped_full);
  for (int nf : config.nfs) {
    const NfCounters& counters = stats_->nfs[nf];
    entered += counter_read(counters.forked);
    left += counter_read(counters.packets_dropped) + counter_read(counters.label_miss) + counter_read(counters.merged) +
            lost_at_crash_[nf];
  }
  return left >= entered;
}

bool Run::chain_drained(ChainRemoval& removal, double now_s) const {
  uint64_t received = 0;
  bool kernel_behind = false, kernel_links = false;
  for (int ring : d_.chains[removal.chain].rings) {
    if (!d_.rings[ring].kernel) {
      if (rte_ring_count(rings_[ring]) != 0) return false;
      continue;
    }
    kernel_links = true;
    uint64_t taken = counter_read(stats_->rings[ring].dequeued);
    received += taken;
    kernel_behind = kernel_behind || counter_read(stats_->rings[ring].enqueued) != taken;
  }
  for (size_t w : removal.workers)
    for (const Segment& segment : d_.workers[w].segments)
      if (held_by_segment(segment) != 0) return false;
  // A socket's losses are counted once its receiver stops: the kernel links' own test below stands for all_left.
  if (!kernel_links) return all_left(removal.chain);
  if (!kernel_behind) return true;
  // A kernel link (a veth between sockets) has no ring to look into, and a frame its receiving socket dropped (full)
  // is counted only when the receiver stops. A veth hands each frame to its peer's socket within the sender's system
  // call: once the receivers took nothing for a while, with no NF holding a packet, what is missing was lost (the
  // results count it).
  if (received != removal.kernel_received) {
    removal.kernel_received = received;
    removal.kernel_moved_at_s = now_s;
    return false;
  }
  return now_s - removal.kernel_moved_at_s >= kKernelQuietSeconds;
}

bool Run::parked_with_packets(const ChainRemoval& removal) const {
  if (!attached_) return false;
  for (int ring : d_.chains[removal.chain].rings)
    if (rte_ring_count(rings_[ring]) != 0) return false;
  for (size_t w : removal.workers)
    for (const Segment& segment : d_.workers[w].segments)
      if (held_by_segment(segment) != 0 && scheduler_->holds(w)) return true;
  return false;
}

// The module lets every worker go (it may hold some stopped), and a fresh one takes the others at once (at the end of
// follow_removals), the chain's out of its sight (their task forgotten, as a reaped worker's), so that they run under
// the kernel's scheduler until they exit. Detached until they were gone, the others ran unscheduled for 10-30 ms and
// rings overflowed under UNiS (14,000 drops a removal). Throttles and closed entries go with the old module; the
// others keep how often to yield.
// The chain's own processes and its applications' forwarding threads go to the control core at once: left on their NF
// core beside the fresh module's real-time pollers, a busy poller of the normal policy gets that core only through the
// kernel's fair server, in one piece of tens of milliseconds, while the staying chains' rings overflow (testpmd,
// polling until it is asked to exit once the chain's own NFs are gone: 2,000 drops in half of the removals).
void Run::hand_to_the_kernel(ChainRemoval& removal) {
  detach_scheduler();
  removal.cgroups_released = cgroup_work_->posted();
  for (size_t w = 0; w < d_.workers.size(); w++) view_->hints.release(w);
  for (size_t c = 0; c < d_.chains.size(); c++) view_->hints.set_entry_open(c, true);
  for (size_t w : removal.workers) {
    view_->hints.set_yield_policy(w, YieldPolicy{});
    task_ids_[w] = 0;  // pids_ keeps it, to reap
    pid_t polling = externals_[w] ? externals_[w]->thread() : pids_[w];
    if (polling > 0) confine_to_control_core(d_.control_core, polling);
  }
  removal.out_of_sight = true;
}

void Run::follow_removals(double now_s) {
  for (auto it = removals_.begin(); it != removals_.end();) {
    ChainRemoval& removal = *it;
    if (removal.left_at_s < 0) {
      removal.drained = chain_drained(removal, now_s);
      if (!removal.drained && now_s - removal.requested_s < kDrainSeconds) {
        // A batch a parked worker holds would wait out the drain: under the kernel's scheduler it reaches the sink.
        if (!removal.out_of_sight && parked_with_packets(removal)) hand_to_the_kernel(removal);
        ++it;
        continue;
      }
      // Its processes must run to see `leave`.
      if (!removal.out_of_sight) hand_to_the_kernel(removal);
      // Told to leave once the module's cgroups let them go: the kernel moves no thread that is exiting, and one left
      // in its NFVnice group, whose weight is the chain's little share, exited on the control core beside the busy
      // loop at that share; the manager's reap, which waits in the kernel for a process's last threads, then stopped
      // the loop for up to 30 ms.
      if (!cgroup_work_->done_through(removal.cgroups_released)) {
        ++it;
        continue;
      }
      for (size_t w : removal.workers) {
        workers_[w].removed = true;   // its exit is the point, not a crash
        if (externals_[w]) continue;  // asked below, when no other application is exiting
        // Its last steps (out of its loop, its report, DPDK's clean-up, exit) on the control core (hand_to_the_kernel
        // put it there): on its own core a process of the normal policy gets the CPU only through the kernel's fair
        // server, ~50 ms a second, and removals took 0.9-1.4 s under coop and unis, all of it waiting.
        flag_store(stats_->workers[w].leave, 1u);
        idle_wake(stats_->workers[w]);
      }
      removal.left_at_s = now_s;
    }
    // An application is asked to exit once the chain's own NF processes are gone: its frees go round every
    // process, and one of them in the middle of its exit would never answer (see ask_external_to_exit).
    bool own_gone = true;
    for (size_t w : removal.workers)
      if (!externals_[w] && !reap(w)) own_gone = false;
    bool all_gone = true;
    for (size_t w : removal.workers) {
      if (reap(w)) continue;
      all_gone = false;
      if (externals_[w] && !(own_gone && ask_external_to_exit(w, now_s))) continue;
      double told_s = externals_[w] ? external_exiting_->second : removal.left_at_s;
      if (!workers_[w].hung && now_s - told_s > kLeaveSeconds) {
        kill(pids_[w], SIGKILL);
        workers_[w].hung = true;  // killed once, its warning given once
        killed_workers_ = true;   // perhaps inside DPDK, holding its shared memory lock: no clean-up at the end
        warnings_.push_back("NF " + nf_names_of(static_cast<int>(w)) + " of removed chain " +
                            d_.chains[removal.chain].name + " did not leave its loop within " +
                            std::to_string(static_cast<int>(kLeaveSeconds)) + " s and was killed");
      }
    }
    if (!all_gone) {
      ++it;
      continue;
    }
    chain_removed_[removal.chain] = true;
    // A kernel-I/O chain's ends (DPDK ports on its veths): drained with it, closed before the control plane removes
    // the veths.
    sink_->close_exit(removal.chain);
    chain_ends_->close_kernel_ends(d_.chains[removal.chain]);
    std::string names;
    for (size_t w : removal.workers) names += (names.empty() ? "" : ",") + nf_names_of(static_cast<int>(w));
    answer_applied({{"event", "change"},
                    {"id", removal.id},
                    {"op", "remove_chain"},
                    {"chain", d_.chains[removal.chain].name},
                    {"state", "applied"},
                    {"nfs_stopped", names},
                    {"drained", removal.drained},  // false: its drain outlasted 3 s; the rest stays counted in flight
                    {"generated", removal.generated},
                    {"t_requested", removal.requested_s},
                    {"t_done", now_s},
                    {"drain_ms", (removal.left_at_s - removal.requested_s) * 1e3},
                    {"ring_drops_during", ring_drops_since(removal.ring_drops_before)},
                    {"ring_drops_by_ring", ring_drops_by_ring_since(removal.ring_drops_before)}},
                   removal.requested_tsc);
    it = removals_.erase(it);
  }
  if (may_reattach()) reattach_scheduler();
}

}  // namespace tandem
