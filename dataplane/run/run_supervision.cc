// Supervision of a run's workers: reaping the ones that exited, restarting or naming crashed NFs, naming hung ones,
// starvation warnings.
#include "run.h"
#include "worker_launcher.h"

namespace tandem {

bool Run::reap(size_t w) {
  if (workers_[w].exited) return true;
  auto status = reap_if_exited(pids_[w]);
  if (!status) return false;
  workers_[w].exited = true;
  workers_[w].exit_description = describe_exit(*status);
  forget(w);
  return true;
}

void Run::mirror_external_counters() {
  for (const auto& external : externals_)
    if (external) external->mirror_counters(*stats_);
}

void Run::check_workers(double now_s, bool check_hangs) {
  relaunch_due(now_s);
  for (size_t w = 0; w < pids_.size(); w++) {
    WorkerState& state = workers_[w];
    if (state.exited || state.removed) continue;  // a removed chain's: reaped as its removal follows it
    if (attached_ && has_exited(pids_[w])) {
      // The module lets go before the reap. A killed process's other threads leave the kernel after its main one
      // is reapable, each removing its /proc entries on its own CPU; the reap removes the process's and waits,
      // spinning in the kernel, for theirs. A thread killed on an NF core while the module had it parked below a
      // real-time poller got that CPU only when the module gave it a turn, and the module's loop was that reap:
      // the manager spun there for good, deaf to SIGKILL (seen with testpmd killed under unis).
      detach_scheduler();
      neutral_hints();
    }
    if (reap(w)) {
      if (schedule_restart(w, now_s)) continue;  // its policy restarts it (or gave up, failing the run)
      auto refusal = restart_refusals_.find(w);
      fail("NF " + nf_names_of(static_cast<int>(w)) + " (pid " + std::to_string(state.pid) + ") " +
               state.exit_description + " at t=" + std::to_string(now_s).substr(0, 5) + " s" +
               (refusal == restart_refusals_.end() ? "" : " (not restarted: " + refusal->second + ")"),
           nf_names_of(static_cast<int>(w)));
      continue;
    }
    if (!check_hangs) continue;
    if (externals_[w]) continue;  // an unmodified application keeps no heartbeat: only its exit is watched
    if (attached_ && scheduler_->holds(w)) {
      // Parked by its scheduler: no iterations is the point, not a hang; start counting when it is let run.
      state.heartbeat_changed_s = now_s;
      state.at_heartbeat_still.reset();
      continue;
    }
    uint64_t heartbeat = counter_read(stats_->workers[w].heartbeat);
    if (heartbeat != state.last_heartbeat || state.heartbeat_changed_s == 0) {
      state.last_heartbeat = heartbeat;
      state.heartbeat_changed_s = now_s;
      state.at_heartbeat_still.reset();
      continue;
    }
    // Its /proc counters are read from the first check that finds the heartbeat still, not at every change: a
    // running worker's always changes, and reading them for every worker four times a second held the service's
    // control loop (and its generator) for ~0.4 ms each time.
    if (!state.at_heartbeat_still) {
      state.at_heartbeat_still = sample_os_counters(state.pid);
      continue;
    }
    // Checked every 250 ms, so a hang is named within a second of its start.
    if (now_s - state.heartbeat_changed_s < kHangSeconds) continue;
    // No loop iteration for kHangSeconds. Spinning on a CPU (more than half the time since its counters were first
    // read) or sleeping means the NF itself is stuck; runnable but given no CPU means its scheduler starves it, which
    // is a result, not a failure.
    OsSample now = sample_os_counters(state.pid);
    const OsSample& still = *state.at_heartbeat_still;
    uint64_t cpu_used = (now.cpu_ns && still.cpu_ns) ? *now.cpu_ns - *still.cpu_ns : 0;
    std::string name = nf_names_of(static_cast<int>(w));
    if (now.state != 'R' || static_cast<double>(cpu_used) > (now.when_s - still.when_s) * 0.5e9) {
      state.hung = true;
      fail("NF " + name + " (pid " + std::to_string(state.pid) + ") is hung: no loop iteration for " +
               std::to_string(now_s - state.heartbeat_changed_s).substr(0, 4) + " s while " +
               (now.state != 'R' ? std::string("in state ") + now.state : "spinning on its CPU"),
           name);
    } else if (!state.starvation_reported) {
      state.starvation_reported = true;
      std::string message = "NF " + name + " is starved: runnable but not scheduled for " +
                            std::to_string(now_s - state.heartbeat_changed_s).substr(0, 4) + " s";
      warnings_.push_back(message);
      emit(events_, {{"event", "warning"}, {"message", message}});
    }
  }
}

}  // namespace tandem
