// An external NF: a ring-backed ethdev port between its two rings, and an unmodified DPDK application
// (dpdk-testpmd) started as a secondary that forwards on that port. Its counters come from the port.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include <rte_ring.h>

#include "contract/deployment.h"
#include "contract/shm_layout.h"

namespace tandem {

// testpmd in a secondary process looks up the pool it would have made ("mb_pool_<socket>") and exits when it
// is missing, although io and macswap forwarding never allocate. The manager makes a small one for it on every
// socket (its lcores may be on any), where none is yet.
void create_pools_for_external_apps();

class ExternalNf {
 public:
  // Makes and starts the port whose receive queue is `in` and transmit queue is `out` (after EAL init). `run` is the
  // run's deployment, read for its run-wide settings and outliving this; the NF and its plan are copied (a chain
  // added live starts its applications before the run's deployment has them).
  ExternalNf(const Deployment& run, const NfConfig& nf, const WorkerPlan& plan, rte_ring* in, rte_ring* out);
  ~ExternalNf();
  ExternalNf(const ExternalNf&) = delete;
  ExternalNf& operator=(const ExternalNf&) = delete;

  // Starts the application with its forwarding lcore on the plan's core and its main lcore (which only waits
  // on stdin) on the control core; it dies with the manager. Returns its pid. `on_control_core`: its forwarding
  // lcore starts on the control core too, for move_to_its_core later (a chain added live: see there). Both lcore
  // ids are the application's own, apart from the workers' (index + 1): it keeps them, and its process, when a
  // re-layout gives the workers around it other indices.
  pid_t launch(int main_lcore_id, int forwarding_lcore_id, bool on_control_core = false);
  // Moves the forwarding thread (once found) to the plan's core. A chain added live starts its application on the
  // control core: on the NF core, under a real-time module, the new thread would get CPU only from the kernel's fair
  // server, 50 ms at a time in which the running NFs do not run and their rings overflow. Throws on failure.
  void move_to_its_core() const;
  // Starts it again after its process died (a restart): the same port, rings and lcores; its log goes on.
  pid_t relaunch();
  // True while the dead process's last ring operation is half done (a ring's head and tail apart): the shared
  // state it left cannot be trusted.
  bool cut_mid_operation() const;
  // After its death: the ring operations it did not live to count (the rings' tails are ahead of the port's
  // counters by them) count from now on too. Returns how many there were.
  uint64_t catch_up_counts();
  // What the port received and did not send since the process now running (or just dead) started: packets it
  // freed because the next ring was full, and, at a death, the ones it held. They cannot be told apart until
  // the run's end (settle_drops, then the pool: Run::split_external_crash_losses).
  uint64_t unsent_since_launch() const;
  // The same for the processes before it, which all died: freed or held at their deaths.
  uint64_t unsent_by_dead_processes() const { return received_at_launch_ - sent_at_launch_; }
  // The thread that forwards, once it polls (it sleeps in EAL until forwarding starts); 0 before. This is what
  // a scheduler switches, not the process.
  pid_t forwarding_thread();
  // CPU time after which a running worker thread is taken to be polling: its own start takes well under 1 ms.
  static constexpr uint64_t kPollingEvidenceNs = 5'000'000;
  pid_t thread() const { return thread_; }  // as last found; 0 = never seen forwarding
  // Copies the port's counters into the NF's and its rings' slots of the stats zone (the manager is their
  // only writer): received = NF in = ring dequeued, sent = NF out = next ring enqueued.
  void mirror_counters(StatsZone& stats) const;
  // After a clean exit: what the application's last process received and did not send, it freed because the next
  // ring was full (net_ring counts no send failures, so they are only known once nothing is in the application's
  // hands); they become that ring's dropped_full. Returns an error when the application's own statistics disagree.
  std::optional<std::string> settle_drops(StatsZone& stats) const;
  // Asks the application to stop forwarding and exit (a newline on its stdin, as testpmd waits for).
  void request_stop();
  const std::string& log_path() const { return log_path_; }
  // The last lines the application printed, joined with " | ", for error messages (the log goes with the run).
  std::string log_tail(int lines = 3) const;
  uint16_t port() const { return port_; }
  const NfConfig& nf() const { return nf_config_; }

 private:
  struct PortCounts {
    uint64_t received = 0, sent = 0;
  };
  // The port's counters, with the operations of dead processes that the port never counted.
  std::optional<PortCounts> counts() const;
  const Deployment& run_;
  const NfConfig nf_config_;
  const WorkerPlan plan_;
  int nf_ = 0;
  uint16_t port_ = 0;
  rte_ring* in_ = nullptr;
  rte_ring* out_ = nullptr;
  int stdin_fd_ = -1;
  int main_lcore_id_ = -1, forwarding_lcore_id_ = -1;
  pid_t pid_ = 0, thread_ = 0;
  std::string log_path_;
  uint64_t received_uncounted_ = 0, sent_uncounted_ = 0;  // by processes that died between an operation and its count
  uint64_t received_at_launch_ = 0, sent_at_launch_ = 0;  // the counts when the running process started
};

}  // namespace tandem
